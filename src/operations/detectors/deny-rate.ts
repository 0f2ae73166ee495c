/**
 * @module Detector: a spike of denials for one agent — at least `threshold` denials within the
 * sliding window, and more than `baseline_factor` × the agent's usual denials per window (learned
 * from the last `baseline_hours` of the audit log and updated as records arrive). Fires at most
 * once per window per agent.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../records/store/index.js';
import { BoundedMap } from './bounded-map.js';
import { type Alert, alertOf, type Detector, type Observed } from './detector.js';

interface AgentState {
  /** Denial times inside the current window, oldest first. */
  recent: number[];
  /** Denials counted towards the baseline, and since when. */
  total: number;
  since: number;
  lastAlert: number;
}

const MAX_AGENTS = 10_000;

export class DenyRateDetector implements Detector {
  readonly name = 'deny_rate' as const;
  readonly #windowMs: number;
  readonly #threshold: number;
  readonly #factor: number;
  readonly #baselineMs: number;
  readonly #agents = new BoundedMap<string, AgentState>(MAX_AGENTS);
  #loadedAt: number | null = null;

  constructor(options: {
    window_seconds: number;
    threshold: number;
    baseline_factor: number;
    baseline_hours: number;
  }) {
    this.#windowMs = options.window_seconds * 1000;
    this.#threshold = options.threshold;
    this.#factor = options.baseline_factor;
    this.#baselineMs = options.baseline_hours * 3_600_000;
  }

  async load(db: Kysely<Database>, now: Date): Promise<void> {
    const from = new Date(now.getTime() - this.#baselineMs).toISOString();
    const rows = await db
      .selectFrom('audit_log')
      .select('agent_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('kind', '=', 'call.denied')
      .where('at', '>=', from)
      .where('agent_id', 'is not', null)
      .groupBy('agent_id')
      .limit(MAX_AGENTS)
      .execute();
    this.#loadedAt = now.getTime() - this.#baselineMs;
    for (const row of rows) {
      if (!row.agent_id) continue;
      this.#agents.set(row.agent_id, {
        recent: [],
        total: Number(row.n),
        since: this.#loadedAt,
        lastAlert: Number.NEGATIVE_INFINITY,
      });
    }
  }

  observe(o: Observed): Alert[] {
    const r = o.record;
    if (r.kind !== 'call.denied' || !r.agentId) return [];
    const t = r.at.getTime();
    const s = this.#agents.upsert(r.agentId, () => ({
      recent: [],
      total: 0,
      since: this.#loadedAt ?? t,
      lastAlert: Number.NEGATIVE_INFINITY,
    }));
    // Usual denials per window, from what came before this window (the spike is not its own baseline).
    const windows = Math.max(1, (t - s.since) / this.#windowMs);
    const baseline = Math.max(0, s.total - s.recent.length) / windows;
    s.recent.push(t);
    s.total += 1;
    while (s.recent.length > 0 && (s.recent[0] ?? t) <= t - this.#windowMs) s.recent.shift();
    // Bounded: past twice the threshold the exact count no longer changes the verdict much.
    if (s.recent.length > this.#threshold * 2 + 100) s.recent.shift();
    const n = s.recent.length;
    if (n < this.#threshold || n <= baseline * this.#factor) return [];
    if (t - s.lastAlert < this.#windowMs) return [];
    s.lastAlert = t;
    return [
      alertOf(this.name, o, `agent ${r.agentId} had ${n} denials within the window`, {
        denials: n,
        window_seconds: this.#windowMs / 1000,
        baseline_per_window: Math.round(baseline * 100) / 100,
        last_rule: r.rule ?? null,
      }),
    ];
  }
}
