/**
 * @module Detector: activity off an agent's usual hours. Each agent's calls are counted by hour
 * of day (UTC); once it has `min_history` calls, a call in an hour that holds less than
 * `min_share` of them is unusual. Fires at most once an hour per agent.
 */
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../records/store/index.js';
import { BoundedMap } from './bounded-map.js';
import { type Alert, alertOf, type Detector, isAttempt, type Observed } from './detector.js';

interface Histogram {
  hours: number[];
  total: number;
  lastAlert: number;
}

const MAX_AGENTS = 10_000;
const HOUR_MS = 3_600_000;
/** How far back the usual hours are learned at start. */
const HISTORY_DAYS = 30;

export class OffHoursDetector implements Detector {
  readonly name = 'off_hours' as const;
  readonly #minHistory: number;
  readonly #minShare: number;
  readonly #agents = new BoundedMap<string, Histogram>(MAX_AGENTS);

  constructor(options: { min_history: number; min_share: number }) {
    this.#minHistory = options.min_history;
    this.#minShare = options.min_share;
  }

  #histogram(agentId: string): Histogram {
    return this.#agents.upsert(agentId, () => ({
      hours: Array.from({ length: 24 }, () => 0),
      total: 0,
      lastAlert: Number.NEGATIVE_INFINITY,
    }));
  }

  async load(db: Kysely<Database>, now: Date): Promise<void> {
    const from = new Date(now.getTime() - HISTORY_DAYS * 86_400_000).toISOString();
    // `at` is ISO-8601 UTC text on both backends: characters 12–13 are the hour.
    const hour = sql<string>`substr(at, 12, 2)`;
    const rows = await db
      .selectFrom('audit_log')
      .select(['agent_id', hour.as('hour')])
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('kind', 'in', ['call.pre', 'call.denied', 'call.pending_approval'])
      .where('agent_id', 'is not', null)
      .where('at', '>=', from)
      .groupBy(['agent_id', hour])
      .limit(MAX_AGENTS * 24)
      .execute();
    for (const row of rows) {
      const h = Number(row.hour);
      if (!row.agent_id || !Number.isInteger(h) || h < 0 || h > 23) continue;
      const hist = this.#histogram(row.agent_id);
      hist.hours[h] = (hist.hours[h] ?? 0) + Number(row.n);
      hist.total += Number(row.n);
    }
  }

  observe(o: Observed): Alert[] {
    const r = o.record;
    if (!isAttempt(r) || !r.agentId) return [];
    const hist = this.#histogram(r.agentId);
    const h = r.at.getUTCHours();
    const share = hist.total === 0 ? 0 : (hist.hours[h] ?? 0) / hist.total;
    const unusual = hist.total >= this.#minHistory && share < this.#minShare;
    hist.hours[h] = (hist.hours[h] ?? 0) + 1;
    hist.total += 1;
    if (!unusual || r.at.getTime() - hist.lastAlert < HOUR_MS) return [];
    hist.lastAlert = r.at.getTime();
    return [
      alertOf(this.name, o, `agent ${r.agentId} is active at an unusual hour (${h}:00 UTC)`, {
        hour_utc: h,
        share_of_history: Math.round(share * 10_000) / 10_000,
        history: hist.total - 1,
      }),
    ];
  }
}
