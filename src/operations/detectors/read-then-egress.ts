/**
 * @module Detector: a call to a private-data tool, then an egress attempt (a tool whose egress is
 * not `none`, allowed, denied or waiting for approval) in the same session within the window —
 * the exfiltration shape. Once per session and egress tool.
 *
 * The read counts from its allowed `call.pre`, not its `call.post`: the pre-record is durable
 * before the tool runs, so it precedes in the log every call the agent makes after seeing the
 * result, on any replica; the post-record may be committed after the response, and after the
 * egress that followed it (a read on one replica, the egress on another, read from the committed
 * log in order: docs/architecture.md §5). A read whose post-record says it failed before any
 * egress was seen no longer counts.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../records/store/index.js';
import { BoundedMap } from './bounded-map.js';
import { type Alert, alertOf, type Detector, isAttempt, type Observed } from './detector.js';

interface LastRead {
  readonly at: number;
  readonly toolId: string;
  readonly callId: string;
  /** Its post-record said ok (or it was loaded from the log): a failure no longer undoes it. */
  readonly done: boolean;
  /** The read before it, which counts again if this one fails. */
  readonly before: LastRead | null;
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
      .select(['a.session_id', 'a.at', 'a.tool_id', 'a.call_id'])
      .where('a.kind', '=', 'call.pre')
      .where('a.decision', '=', 'allow')
      .where('t.data_access', '=', 'private')
      .where('a.at', '>=', new Date(now.getTime() - this.#windowMs).toISOString())
      .orderBy('a.seq', 'asc')
      .limit(MAX_SESSIONS)
      .execute();
    for (const r of rows) {
      if (r.session_id && r.tool_id) {
        const at = Date.parse(r.at);
        this.#lastRead.set(r.session_id, {
          at,
          toolId: r.tool_id,
          callId: r.call_id ?? '',
          done: true,
          before: null,
        });
      }
    }
  }

  /** Notes a private read's pre-record, or settles it by its post-record. */
  #read(r: Observed['record'], sessionId: string, toolId: string): void {
    const last = this.#lastRead.get(sessionId) ?? null;
    if (r.kind === 'call.pre' && r.decision === 'allow') {
      // One read back is kept (bounded): concurrent reads all count, a failed one restores it.
      const before = last ? { ...last, before: null } : null;
      this.#lastRead.set(sessionId, {
        at: r.at.getTime(),
        toolId,
        callId: r.callId,
        done: false,
        before,
      });
    } else if (r.kind === 'call.post' && last?.callId === r.callId && !last.done) {
      if (r.outcome === 'ok') this.#lastRead.set(sessionId, { ...last, done: true, before: null });
      else if (last.before) this.#lastRead.set(sessionId, last.before);
      else this.#lastRead.delete(sessionId);
    }
  }

  observe(o: Observed): Alert[] {
    const r = o.record;
    if (!r.sessionId || !o.tool) return [];
    // A private tool with egress is checked against the read before it, then noted as a read.
    const alerts = this.#egress(o, r.sessionId, o.tool);
    if (o.tool.dataAccess === 'private') this.#read(r, r.sessionId, o.tool.id);
    return alerts;
  }

  #egress(o: Observed, sessionId: string, tool: NonNullable<Observed['tool']>): Alert[] {
    const r = o.record;
    if (!isAttempt(r) || tool.egress === 'none') return [];
    const read = this.#lastRead.get(sessionId);
    if (!read) return [];
    const gap = r.at.getTime() - read.at;
    if (gap < 0 || gap > this.#windowMs) return [];
    const key = `${sessionId}|${tool.id}`;
    if (this.#alerted.get(key)) return [];
    this.#alerted.set(key, true);
    return [
      alertOf(
        this.name,
        o,
        `session read private data with ${read.toolId} then attempted egress with ${tool.id}`,
        {
          read_tool: read.toolId,
          egress_tool: tool.id,
          egress: tool.egress,
          attempt: r.decision,
          ...(r.rule ? { rule: r.rule } : {}),
          seconds_after_read: Math.round(gap / 1000),
        },
      ),
    ];
  }
}
