/**
 * @module Detector: a successful call to a private-data tool, then an egress attempt (a tool
 * whose egress is not `none`, allowed, denied or waiting for approval) in the same session
 * within the window — the exfiltration shape. Once per session and egress tool.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../records/store/index.js';
import { BoundedMap } from './bounded-map.js';
import { type Alert, alertOf, type Detector, isAttempt, type Observed } from './detector.js';

interface LastRead {
  at: number;
  toolId: string;
}

const MAX_SESSIONS = 50_000;

export class ReadThenEgressDetector implements Detector {
  readonly name = 'read_then_egress' as const;
  readonly #windowMs: number;
  readonly #lastRead = new BoundedMap<string, LastRead>(MAX_SESSIONS);
  /** Session × egress tool already alerted: repeated attempts do not flood the webhook. */
  readonly #alerted = new BoundedMap<string, true>(MAX_SESSIONS);

  constructor(options: { window_seconds: number }) {
    this.#windowMs = options.window_seconds * 1000;
  }

  /** Private reads of the last window, so a restart does not forget a session's read. */
  async load(db: Kysely<Database>, now: Date): Promise<void> {
    const rows = await db
      .selectFrom('audit_log as a')
      .innerJoin('tool_versions as t', (j) =>
        j.onRef('t.tool_id', '=', 'a.tool_id').onRef('t.version', '=', 'a.tool_version'),
      )
      .select(['a.session_id', 'a.at', 'a.tool_id'])
      .where('a.kind', '=', 'call.post')
      .where('a.outcome', '=', 'ok')
      .where('t.data_access', '=', 'private')
      .where('a.at', '>=', new Date(now.getTime() - this.#windowMs).toISOString())
      .orderBy('a.seq', 'asc')
      .limit(MAX_SESSIONS)
      .execute();
    for (const r of rows) {
      if (r.session_id && r.tool_id)
        this.#lastRead.set(r.session_id, { at: Date.parse(r.at), toolId: r.tool_id });
    }
  }

  observe(o: Observed): Alert[] {
    const r = o.record;
    if (!r.sessionId || !o.tool) return [];
    if (r.kind === 'call.post' && r.outcome === 'ok' && o.tool.dataAccess === 'private') {
      this.#lastRead.set(r.sessionId, { at: r.at.getTime(), toolId: o.tool.id });
      return [];
    }
    if (!isAttempt(r) || o.tool.egress === 'none') return [];
    const read = this.#lastRead.get(r.sessionId);
    if (!read) return [];
    const gap = r.at.getTime() - read.at;
    if (gap < 0 || gap > this.#windowMs) return [];
    const key = `${r.sessionId}|${o.tool.id}`;
    if (this.#alerted.get(key)) return [];
    this.#alerted.set(key, true);
    return [
      alertOf(
        this.name,
        o,
        `session read private data with ${read.toolId} then attempted egress with ${o.tool.id}`,
        {
          read_tool: read.toolId,
          egress_tool: o.tool.id,
          egress: o.tool.egress,
          attempt: r.decision,
          ...(r.rule ? { rule: r.rule } : {}),
          seconds_after_read: Math.round(gap / 1000),
        },
      ),
    ];
  }
}
