/**
 * @module Spend charging and the ceilings no new session or run resets. A call's cost
 * is charged to its session's spend budget and to every rolling-window ceiling of its agent, and
 * its call and external-send counts to theirs, in one transaction that either takes all of them or
 * none: the database decides, so concurrent calls on any number of replicas never over-spend.
 *
 * A rolling window of W seconds is kept as buckets of W/60 s; a charge sums the buckets that
 * overlap the last W seconds, which covers at least the window (never less), so a ceiling is never
 * passed within any W seconds. Egress bytes are known only after a call: they are added then, and
 * a window already at its ceiling stops the next call.
 */
import type { Kysely } from 'kysely';
import {
  addToCounter,
  type CounterCharge,
  counterTotal,
  type Database,
  type Store,
} from '../../records/store/index.js';
import type { AgentCeilings, CeilingWindow, SessionBudgets } from '../identity/index.js';

/** The cross-session private-read window when an agent configures none. */
export const DEFAULT_FLOW_WINDOW_SECONDS = 3600;
/**
 * How long the destinations and instruction-like text an untrusted result brought are remembered
 * for its (agent, user) across sessions and runs, when the agent configures no
 * `untrusted_window_seconds`: a day, longer than a working session an attacker's text could steer.
 */
export const DEFAULT_UNTRUSTED_WINDOW_SECONDS = 86_400;

/** The window of the ceilings an agent gets when it configures no `windows`: a day. */
export const DEFAULT_CEILING_WINDOW_SECONDS = 86_400;
/** How many sessions' worth of a session budget the default day ceiling allows. */
export const DEFAULT_SESSION_BUDGETS_PER_DAY = 10;
/** Calls of any one tool per (agent, user) per day, when the agent configures no `windows`. */
export const DEFAULT_CALLS_PER_TOOL = 10_000;
/** External sends per (agent, user) per day when neither a window nor a session budget says. */
export const DEFAULT_EXTERNAL_SENDS = 1_000;

/**
 * The rolling ceilings that hold for an agent: its own `windows` when it configures them (an
 * empty list turns them off, on purpose), otherwise one default day window per (agent, user), so
 * that in the default configuration no new session or run starts a fresh allowance: calls of any
 * tool, external sends, and every session budget it sets, at DEFAULT_SESSION_BUDGETS_PER_DAY
 * sessions' worth a day.
 */
export function effectiveWindows(
  ceilings: AgentCeilings,
  budgets: SessionBudgets,
): readonly CeilingWindow[] {
  if (ceilings.windows !== undefined) return ceilings.windows;
  const times = (n: number | undefined) =>
    n === undefined ? undefined : n * DEFAULT_SESSION_BUDGETS_PER_DAY;
  const egress = times(budgets.egress_bytes);
  const spend = times(budgets.spend_cents);
  return [
    {
      scope: 'agent_user',
      window_seconds: DEFAULT_CEILING_WINDOW_SECONDS,
      calls_per_tool: DEFAULT_CALLS_PER_TOOL,
      external_sends: times(budgets.external_sends) ?? DEFAULT_EXTERNAL_SENDS,
      ...(egress !== undefined ? { egress_bytes: egress } : {}),
      ...(spend !== undefined ? { spend_cents: spend } : {}),
    },
  ];
}

/**
 * A start no record reaches: the last instant with a four-digit year. Times are compared as ISO
 * text in the database, and a later Date prints as `+275760-…`, which sorts before every
 * `2026-…`: the "never" of a zero window must stay a four-digit year to compare as never.
 */
const NEVER = new Date('9999-12-31T23:59:59.999Z');

/** The start of the untrusted-memory window at `now`; 0 seconds: the run only (never matches). */
export function untrustedSince(ceilings: AgentCeilings, now: Date): Date {
  const seconds = ceilings.untrusted_window_seconds ?? DEFAULT_UNTRUSTED_WINDOW_SECONDS;
  return seconds === 0 ? NEVER : new Date(now.getTime() - seconds * 1000);
}
/** Buckets per window: the window's resolution (at worst it counts one bucket too many). */
const BUCKETS_PER_WINDOW = 60;

export type Admission =
  | {
      readonly ok: true;
      /** Bytes the agent's egress ceilings have left (least of them); absent when none is set. */
      readonly egressLeft?: number;
    }
  | {
      readonly ok: false;
      readonly code: 'RATE_LIMITED' | 'BUDGET_EXCEEDED';
      readonly rule: string;
      readonly message: string;
    };

const ADMITTED: Admission = { ok: true };

export interface CallFacts {
  readonly sessionId: string;
  readonly agentId: string;
  readonly userId: string | null;
  readonly toolId: string;
  readonly externalSend: boolean;
  /** This call's cost in cents (0 for a tool without one). */
  readonly cents: number;
  /** The session's spend budget in cents, if it has one. */
  readonly spendBudget: number | undefined;
  readonly now: Date;
}

type Metric = 'calls' | 'external_sends' | 'spend_cents' | 'egress_bytes' | 'private_read';

interface Slot {
  readonly key: string;
  readonly bucket: number;
  /** Lowest bucket that overlaps the window. */
  readonly from: number;
  readonly expiresAt: string;
}

function slot(
  metric: Metric,
  scope: CeilingWindow['scope'] | 'flow',
  windowSeconds: number,
  agentId: string,
  userId: string | null,
  toolId: string | null,
  now: Date,
): Slot {
  const bucketSeconds = Math.max(1, Math.ceil(windowSeconds / BUCKETS_PER_WINDOW));
  const seconds = now.getTime() / 1000;
  const bucket = Math.floor(seconds / bucketSeconds);
  // The user part: every user for `agent`, one user (or nobody, `null`) otherwise.
  const user = scope === 'agent' ? '*' : userId;
  return {
    key: JSON.stringify([metric, scope, windowSeconds, agentId, user, toolId]),
    bucket,
    from: Math.floor((seconds - windowSeconds) / bucketSeconds),
    expiresAt: new Date(((bucket + 1) * bucketSeconds + windowSeconds) * 1000).toISOString(),
  };
}

const LABEL: Readonly<Record<Metric, string>> = {
  calls: 'calls of this tool',
  external_sends: 'external sends',
  spend_cents: 'cents of spend',
  egress_bytes: 'egress bytes',
  private_read: 'private reads',
};

function who(scope: CeilingWindow['scope']): string {
  return scope === 'agent' ? 'this agent' : 'this agent for this user';
}

/**
 * Charges one call, or refuses it with nothing charged. Never charges part: the session's spend,
 * every window's spend, calls and sends are taken all or none, each counter under its key's lock
 * and its sum checked (Store.chargeCounters: one transaction on SQLite, one server-side function
 * on PostgreSQL, so a concurrent charge on any replica waits for this one's commit).
 */
export async function admitCall(
  store: Pick<Store, 'db' | 'chargeCounters'>,
  call: CallFacts,
  ceilings: AgentCeilings,
): Promise<Admission> {
  const windows = ceilings.windows ?? [];
  // Egress is charged after calls; a window already at its ceiling stops the next one, and what
  // the windows have left caps what this call may move (concurrent calls each see all of it).
  let egressLeft = Number.POSITIVE_INFINITY;
  for (const w of windows) {
    if (w.egress_bytes === undefined) continue;
    const s = slot(
      'egress_bytes',
      w.scope,
      w.window_seconds,
      call.agentId,
      call.userId,
      null,
      call.now,
    );
    const used = await counterTotal(store.db, s);
    egressLeft = Math.min(egressLeft, w.egress_bytes - used);
    if (used >= w.egress_bytes) {
      return {
        ok: false,
        code: 'BUDGET_EXCEEDED',
        rule: 'ceiling.egress_bytes',
        message: `${who(w.scope)} has used its ${w.egress_bytes} egress bytes per ${w.window_seconds} s`,
      };
    }
  }
  const charges: { c: CounterCharge; w: CeilingWindow; metric: Metric }[] = [];
  for (const w of windows) {
    const take = (
      metric: Metric,
      limit: number | undefined,
      amount: number,
      tool: string | null,
    ) => {
      if (limit === undefined || amount === 0) return;
      const s = slot(metric, w.scope, w.window_seconds, call.agentId, call.userId, tool, call.now);
      charges.push({ c: { ...s, amount, limit }, w, metric });
    };
    take('calls', w.calls_per_tool, 1, call.toolId);
    take('external_sends', w.external_sends, call.externalSend ? 1 : 0, null);
    take('spend_cents', w.spend_cents, call.cents, null);
  }
  const admitted: Admission = Number.isFinite(egressLeft) ? { ok: true, egressLeft } : ADMITTED;
  if (charges.length === 0 && call.cents === 0) return admitted;
  // One lock order for every charge: no two can wait on each other in a cycle.
  charges.sort((a, b) => (a.c.key < b.c.key ? -1 : a.c.key > b.c.key ? 1 : 0));
  const spend =
    call.cents > 0
      ? { sessionId: call.sessionId, cents: call.cents, budget: call.spendBudget }
      : null;
  const refused = await store.chargeCounters(
    store.db,
    spend,
    charges.map((x) => x.c),
  );
  if (refused === null) return admitted;
  if (refused === 'spend') {
    return {
      ok: false,
      code: 'BUDGET_EXCEEDED',
      rule: 'budget.spend',
      message: `this call costs ${call.cents} cents, more than is left of the session's spend budget of ${call.spendBudget} cents`,
    };
  }
  const { c, w, metric } = charges[refused] as (typeof charges)[number];
  return {
    ok: false,
    code: metric === 'calls' ? 'RATE_LIMITED' : 'BUDGET_EXCEEDED',
    rule: `ceiling.${metric === 'calls' ? 'calls_per_tool' : metric}`,
    message: `${who(w.scope)} may use at most ${c.limit} ${LABEL[metric]} per ${w.window_seconds} s`,
  };
}

/** Adds the egress bytes a finished call moved to every egress window of its agent. */
export async function chargeEgress(
  db: Kysely<Database>,
  call: { agentId: string; userId: string | null; now: Date },
  ceilings: AgentCeilings,
  bytes: number,
): Promise<void> {
  if (bytes <= 0) return;
  for (const w of ceilings.windows ?? []) {
    if (w.egress_bytes === undefined) continue;
    await addToCounter(
      db,
      slot('egress_bytes', w.scope, w.window_seconds, call.agentId, call.userId, null, call.now),
      bytes,
    );
  }
}

function flowWindow(ceilings: AgentCeilings): number {
  return ceilings.flow_window_seconds ?? DEFAULT_FLOW_WINDOW_SECONDS;
}

/** Per database: the bucket each private-read counter was last written in by this process. */
const recordedReads = new WeakMap<Kysely<Database>, Map<string, number>>();
const RECORDED_READS_MAX = 10_000;

/**
 * Remembers that this (agent, user) read private data now, for the cross-session flow rule. One
 * write per counter and bucket from this process: a bucket that holds a read already says all the
 * window needs (the window is counted in whole buckets).
 */
export async function recordPrivateRead(
  db: Kysely<Database>,
  call: { agentId: string; userId: string | null; now: Date },
  ceilings: AgentCeilings,
): Promise<void> {
  const seconds = flowWindow(ceilings);
  if (seconds === 0) return;
  const s = slot('private_read', 'flow', seconds, call.agentId, call.userId, null, call.now);
  let seen = recordedReads.get(db);
  if (seen === undefined) {
    seen = new Map();
    recordedReads.set(db, seen);
  }
  if (seen.get(s.key) === s.bucket) return;
  await addToCounter(db, s, 1);
  if (seen.size >= RECORDED_READS_MAX) seen.clear();
  seen.set(s.key, s.bucket);
}

/**
 * True when any session of this agent acting for this user (or for nobody) read private data
 * within the flow window, whatever its run: a new session or run id does not launder the read.
 */
export async function readPrivateRecently(
  db: Kysely<Database>,
  call: { agentId: string; userId: string | null; now: Date },
  ceilings: AgentCeilings,
): Promise<boolean> {
  const seconds = flowWindow(ceilings);
  if (seconds === 0) return false;
  const s = slot('private_read', 'flow', seconds, call.agentId, call.userId, null, call.now);
  return (await counterTotal(db, s)) > 0;
}

/** Drops buckets past every window they could count in. */
export async function sweepCeilingCounters(db: Kysely<Database>, now: Date): Promise<number> {
  const result = await db
    .deleteFrom('ceiling_counters')
    .where('expires_at', '<', now.toISOString())
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
