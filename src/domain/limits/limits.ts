/**
 * @module Rate limits and session budgets (C7), enforced by single atomic statements so
 * that concurrent calls can never be admitted past a limit: the database decides, not a read
 * followed by a write.
 */
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../records/store/index.js';
import type { RateLimit } from '../catalog/index.js';
import type { SessionBudgets } from '../identity/index.js';

export interface LimitCheck {
  readonly ok: boolean;
  readonly rule?: string;
  readonly message?: string;
}

const OK: LimitCheck = { ok: true };

const DAY_SECONDS = 86_400;
/** How many runs' worth of a tool's `per_run` limit one (agent, user) may use in a UTC day. */
export const RUNS_PER_DAY = 10;

/**
 * Takes one slot of a counter if fewer than `limit` are taken. One statement: insert the counter
 * at 1, or add one only while below the limit; no row back means the limit was reached.
 */
async function takeSlot(
  db: Kysely<Database>,
  key: string,
  limit: number,
  expiresAt: string,
): Promise<boolean> {
  const result = await sql<{ count: number }>`
    insert into rate_counters (key, count, expires_at) values (${key}, 1, ${expiresAt})
    on conflict (key) do update set count = rate_counters.count + 1
      where rate_counters.count < ${limit}
    returning count`.execute(db);
  return result.rows.length > 0;
}

export async function takeRateLimits(
  db: Kysely<Database>,
  call: {
    agentId: string;
    userId: string | null;
    toolId: string;
    runId: string;
    now: Date;
    sessionExpiresAt: string;
  },
  limit: RateLimit | undefined,
): Promise<LimitCheck> {
  if (!limit) return OK;
  if (limit.per_run !== undefined) {
    const key = `run|${call.agentId}|${call.toolId}|${call.runId}`;
    if (!(await takeSlot(db, key, limit.per_run, call.sessionExpiresAt))) {
      return {
        ok: false,
        rule: 'rate.per_run',
        message: `at most ${limit.per_run} calls of this tool per run`,
      };
    }
    // A new run must not be a fresh allowance: the same (agent, user) gets at most
    // RUNS_PER_DAY runs' worth a day, whatever the run ids (after the run's own slot, so
    // that a call the run refuses spends none of the day).
    const day = Math.floor(call.now.getTime() / 1000 / DAY_SECONDS);
    const dayKey = `runday|${JSON.stringify([call.agentId, call.userId, call.toolId])}|${day}`;
    const dayMax = limit.per_run * RUNS_PER_DAY;
    const dayExpires = new Date((day + 1) * DAY_SECONDS * 1000).toISOString();
    if (!(await takeSlot(db, dayKey, dayMax, dayExpires))) {
      return {
        ok: false,
        rule: 'rate.per_run_daily',
        message: `at most ${dayMax} calls of this tool per day across runs (${RUNS_PER_DAY} runs' worth)`,
      };
    }
  }
  if (limit.per_window) {
    const { limit: max, window_seconds } = limit.per_window;
    const bucket = Math.floor(call.now.getTime() / 1000 / window_seconds);
    const key = `win|${call.agentId}|${call.toolId}|${window_seconds}|${bucket}`;
    const expires = new Date((bucket + 1) * window_seconds * 1000).toISOString();
    if (!(await takeSlot(db, key, max, expires))) {
      return {
        ok: false,
        rule: 'rate.per_window',
        message: `at most ${max} calls of this tool per ${window_seconds} s`,
      };
    }
  }
  return OK;
}

/** Counts one external send against the session's budget, atomically; refuses past the ceiling. */
export async function takeExternalSend(
  db: Kysely<Database>,
  sessionId: string,
  budgets: SessionBudgets,
): Promise<LimitCheck> {
  const ceiling = budgets.external_sends;
  const q = db
    .updateTable('sessions')
    .set((eb) => ({ external_sends: eb('external_sends', '+', 1) }))
    .where('id', '=', sessionId);
  const result = await (ceiling === undefined
    ? q
    : q.where('external_sends', '<', ceiling)
  ).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1
    ? OK
    : {
        ok: false,
        rule: 'budget.external_sends',
        message: `the session's budget of ${ceiling} external sends is spent`,
      };
}

/**
 * Egress is counted after a call (by the proxy); a session past its byte budget stops here. Spend
 * is charged before a call, exactly, by ceilings.ts (spent + cost ≤ budget), so a call that costs
 * nothing is never stopped by it.
 */
export function checkSpentBudgets(
  session: { egress_bytes: number },
  budgets: SessionBudgets,
): LimitCheck {
  if (budgets.egress_bytes !== undefined && session.egress_bytes >= budgets.egress_bytes) {
    return {
      ok: false,
      rule: 'budget.egress_bytes',
      message: "the session's egress budget is spent",
    };
  }
  return OK;
}

/** Drops counters whose window or session has ended; they can never refuse a call again. */
export async function sweepRateCounters(db: Kysely<Database>, now: Date): Promise<number> {
  const result = await db
    .deleteFrom('rate_counters')
    .where('expires_at', '<', now.toISOString())
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
