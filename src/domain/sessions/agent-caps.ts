/**
 * @module Per-agent caps on what everyone shares: open gate sessions and pending
 * approvals. Counting, evicting for fairness and inserting happen under a lock on the agent's row,
 * so parallel opens of one agent cannot slip past the cap on PostgreSQL either.
 */
import type { Kysely, Transaction } from 'kysely';
import { chooseFairVictim, problem, ToolgateError } from '../../core/index.js';
import type { Database, SessionRow } from '../../records/store/index.js';

export interface AgentCaps {
  /** Open, unexpired gate sessions of one agent (REST, MCP and library alike). */
  readonly maxSessionsPerAgent: number;
  /** Pending, unexpired approval requests of one agent across all its sessions. */
  readonly maxPendingApprovalsPerAgent: number;
  /**
   * The share (0 < share ≤ 1) of the agent's session cap one user its tokens vouch for (a JWT or
   * OAuth token's user) may hold, at least one session: one user of a multi-user host app cannot
   * take every slot from the others and from the agent's own keys. The same share of the agent's
   * pending approvals is what one principal (such a user, or the agent's own keys together) may
   * hold (maxPendingApprovalsPerPrincipal).
   */
  readonly userSessionShare: number;
}

export const DEFAULT_AGENT_CAPS: AgentCaps = {
  maxSessionsPerAgent: 64,
  maxPendingApprovalsPerAgent: 50,
  userSessionShare: 0.5,
};

/** Open sessions one token user of an agent may hold under `caps`: its share, at least one. */
export function maxSessionsPerUser(
  caps: Pick<AgentCaps, 'maxSessionsPerAgent' | 'userSessionShare'>,
): number {
  return Math.max(1, Math.floor(caps.maxSessionsPerAgent * caps.userSessionShare));
}

/**
 * Pending approvals one principal of an agent may hold under `caps`: a token user, or the agent's
 * own keys together, gets the session share of the agent's approval cap, at least one (attack
 * round 14, Q2: one user of a multi-user host app parked the whole cap for the approvals' 24 h).
 */
export function maxPendingApprovalsPerPrincipal(
  caps: Pick<AgentCaps, 'maxPendingApprovalsPerAgent' | 'userSessionShare'>,
): number {
  return Math.max(1, Math.floor(caps.maxPendingApprovalsPerAgent * caps.userSessionShare));
}

/** Caps must be positive integers: a zero or fractional cap is a configuration mistake. */
export function resolveAgentCaps(input: Partial<AgentCaps> = {}): AgentCaps {
  const caps = { ...DEFAULT_AGENT_CAPS, ...input };
  const share = caps.userSessionShare;
  if (typeof share !== 'number' || !(share > 0 && share <= 1)) {
    throw new ToolgateError('INPUT_INVALID', 'caps.userSessionShare must be in (0, 1]', {
      problems: [problem('/caps/userSessionShare', 'must be a number above 0, at most 1', 'range')],
    });
  }
  for (const [name, value] of Object.entries(caps)) {
    if (name === 'userSessionShare') continue;
    if (!Number.isInteger(value) || value < 1) {
      throw new ToolgateError('INPUT_INVALID', `caps.${name} must be a positive integer`, {
        problems: [problem(`/caps/${name}`, 'must be a positive integer', 'range')],
      });
    }
  }
  return caps;
}

/** What an agent at its session cap is told to wait: long enough to close one, short to retry. */
export const SESSION_CAP_RETRY_AFTER_S = 30;

/** Takes the agent's row lock for the rest of the transaction (a no-op update, as for sessions). */
export async function lockAgent(trx: Transaction<Database>, agentId: string): Promise<void> {
  await trx
    .updateTable('agents')
    .set((eb) => ({ id: eb.ref('id') }))
    .where('id', '=', agentId)
    .execute();
}

/** Open, unexpired sessions of the agent (of one user of it, when `userId`), in `trx`. */
async function openSessionsOf(
  trx: Transaction<Database>,
  agentId: string,
  userId: string | null,
  now: Date,
): Promise<number> {
  let query = trx
    .selectFrom('sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('agent_id', '=', agentId)
    .where('status', '=', 'open')
    .where('expires_at', '>', now.toISOString());
  if (userId !== null) query = query.where('user_id', '=', userId);
  return Number((await query.executeTakeFirst())?.n ?? 0);
}

/** Why a session ended for another principal's newcomer (the `session.evicted` record's reason). */
export const FAIR_EVICTION = 'evicted_for_fairness';

/** Approval statuses that still wait on a person, or on the call's retry once approved. */
const WAITING_APPROVAL = ['pending', 'approved'] as const;

/** Open sessions of the agent whose calls wait on an unexpired approval, in `trx`. */
async function waitingOnApproval(
  trx: Transaction<Database>,
  agentId: string,
  now: Date,
): Promise<Set<string>> {
  const rows = await trx
    .selectFrom('approvals')
    .select('session_id')
    .distinct()
    .where('agent_id', '=', agentId)
    .where('status', 'in', [...WAITING_APPROVAL])
    .where('expires_at', '>', now.toISOString())
    .execute();
  return new Set(rows.map((r) => r.session_id));
}

/**
 * Of `sessionIds`, the sessions whose calls wait on an unexpired approval (pending, or approved
 * and not yet retried): the MCP 2025 front's own fair eviction spares them as this cap does.
 */
export async function sessionsWaitingOnApproval(
  db: Kysely<Database>,
  sessionIds: readonly string[],
  now: Date,
): Promise<ReadonlySet<string>> {
  if (sessionIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('approvals')
    .select('session_id')
    .distinct()
    .where('session_id', 'in', [...sessionIds])
    .where('status', 'in', [...WAITING_APPROVAL])
    .where('expires_at', '>', now.toISOString())
    .execute();
  return new Set(rows.map((r) => r.session_id));
}

/** Calls of each session running in this process now (the gate's `execute` step). */
const callsInFlight = new Map<string, number>();

/**
 * Marks a call of the session as running in this process until the returned function is called:
 * fair eviction never chooses a session with a call in flight.
 */
export function callInFlight(sessionId: string): () => void {
  callsInFlight.set(sessionId, (callsInFlight.get(sessionId) ?? 0) + 1);
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    const left = (callsInFlight.get(sessionId) ?? 1) - 1;
    if (left > 0) callsInFlight.set(sessionId, left);
    else callsInFlight.delete(sessionId);
  };
}

/**
 * The open session of `agentId` to end for a newcomer of principal `newcomer` (a token user's id;
 * null: the agent's own keys), chosen by core's chooseFairVictim: a principal holding more than
 * the newcomer's yields its least recently used session, the biggest holder first and the next
 * when the biggest has nothing to yield. A session's principal is its token user, or the agent when
 * no token vouched for a user. A session with a call in flight in this process is never chosen;
 * one waiting on an approval (pending, or approved and not yet retried) only when its principal
 * holds more than `share`. Null when none may be ended (the newcomer is refused).
 */
async function fairVictim(
  trx: Transaction<Database>,
  agentId: string,
  newcomer: string | null,
  now: Date,
  share: number,
): Promise<string | null> {
  const rows = await trx
    .selectFrom('sessions')
    .select(['id', 'user_id', 'user_permissions', 'created_at', 'last_used_at'])
    .where('agent_id', '=', agentId)
    .where('status', '=', 'open')
    .where('expires_at', '>', now.toISOString())
    .execute();
  const waiting = await waitingOnApproval(trx, agentId, now);
  return chooseFairVictim(
    rows.map((r) => ({
      key: r.id,
      holder: r.user_permissions !== null ? r.user_id : null,
      used: unwrittenUse(trx, r.id) ?? r.last_used_at ?? r.created_at,
      busy: callsInFlight.has(r.id),
      waiting: waiting.has(r.id),
    })),
    newcomer,
    share,
  );
}

/**
 * Inserts the session row unless (`tokenUser`: the row's user is the one the caller's token
 * vouches for) that user holds their share (maxSessionsPerUser), or the agent holds
 * `caps.maxSessionsPerAgent` open, unexpired sessions and the newcomer's principal holds as many
 * as the biggest holder of that agent: then it throws LIMIT_REACHED and writes nothing. At the
 * agent's cap a smaller holder's newcomer closes the biggest holder's least recently used session
 * that runs no call and, unless that holder is over its share, waits on no approval (fair eviction;
 * with none, LIMIT_REACHED), in the same transaction as the count; its id is returned (null: none), and the
 * caller ends it as a revocation (gates, approvals, the audited record).
 */
export async function insertSessionWithinCap(
  db: Kysely<Database>,
  row: SessionRow,
  caps: Pick<AgentCaps, 'maxSessionsPerAgent' | 'userSessionShare'>,
  now: Date,
  tokenUser: boolean,
): Promise<string | null> {
  return db.transaction().execute(async (trx) => {
    await lockAgent(trx, row.agent_id);
    const perUser = maxSessionsPerUser(caps);
    if (
      tokenUser &&
      row.user_id !== null &&
      (await openSessionsOf(trx, row.agent_id, row.user_id, now)) >= perUser
    ) {
      throw new ToolgateError(
        'LIMIT_REACHED',
        `user ${row.user_id} has ${perUser} open sessions of agent ${row.agent_id} (a user's share); close one (DELETE /v1/sessions/{id}) first`,
        {
          limit: 'sessions_per_user',
          max: perUser,
          retryAfterSeconds: SESSION_CAP_RETRY_AFTER_S,
        },
      );
    }
    const max = caps.maxSessionsPerAgent;
    let evicted: string | null = null;
    if ((await openSessionsOf(trx, row.agent_id, null, now)) >= max) {
      evicted = await fairVictim(trx, row.agent_id, tokenUser ? row.user_id : null, now, perUser);
      if (evicted === null) {
        throw new ToolgateError(
          'LIMIT_REACHED',
          `agent ${row.agent_id} has ${max} open sessions; close one (DELETE /v1/sessions/{id}) first`,
          { limit: 'sessions_per_agent', max, retryAfterSeconds: SESSION_CAP_RETRY_AFTER_S },
        );
      }
      await trx
        .updateTable('sessions')
        .set({ status: 'closed' })
        .where('id', '=', evicted)
        .where('status', '=', 'open')
        .execute();
    }
    await trx.insertInto('sessions').values(row).execute();
    return evicted;
  });
}

/**
 * How often one process writes a session's last use: its LRU order is kept to the second, so a
 * session used seconds ago is never tied with older ones, at most one write a second a session.
 */
const TOUCH_EVERY_MS = 1_000;
/** Sessions whose last write this process remembers; past it, it forgets them all. */
const TOUCHED_MAX = 10_000;
/** When this process last wrote each session's last use. */
const touched = new Map<string, number>();

/**
 * Last uses not yet written, per database (keyed by the adapter Kysely shares between a database
 * and its transactions): the sessions touched within one TOUCH_EVERY_MS are written together, in
 * one transaction, so a busy gateway pays one commit (one sync) a second for them all instead of
 * one per session, none of them on a call's path. This process's eviction reads them from here.
 */
const unwritten = new WeakMap<object, { db: Kysely<Database>; uses: Map<string, string> }>();

/**
 * Records that a request used the session now (its LRU order for fair eviction), at most once a
 * second per session and process; written within a second with the others touched meanwhile.
 * Never throws: a failed write costs only that order's precision.
 */
export function touchSession(db: Kysely<Database>, sessionId: string, now: Date): void {
  const at = now.getTime();
  const last = touched.get(sessionId);
  if (last !== undefined && at - last < TOUCH_EVERY_MS && at >= last) return;
  if (touched.size >= TOUCHED_MAX) touched.clear();
  touched.set(sessionId, at);
  const key = db.getExecutor().adapter;
  let batch = unwritten.get(key);
  if (!batch) {
    batch = { db, uses: new Map() };
    unwritten.set(key, batch);
    setTimeout(() => void writeTouches(key), TOUCH_EVERY_MS).unref();
  }
  batch.uses.set(sessionId, now.toISOString());
}

async function writeTouches(key: object): Promise<void> {
  const batch = unwritten.get(key);
  unwritten.delete(key);
  if (!batch || batch.uses.size === 0) return;
  // One statement per session, each its own commit, in id order: replicas touching the same
  // sessions never hold one row while waiting for another (one transaction over them all, in
  // each process's own order, made replicas wait on each other and deadlock).
  for (const [id, at] of [...batch.uses].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    await batch.db
      .updateTable('sessions')
      .set({ last_used_at: at })
      .where('id', '=', id)
      .execute()
      .catch(() => {});
  }
}

/** The session's last use this process has not written yet, if any. */
function unwrittenUse(db: Kysely<Database> | Transaction<Database>, id: string): string | null {
  return unwritten.get(db.getExecutor().adapter)?.uses.get(id) ?? null;
}

/** Pending, unexpired approval requests of this agent, counted inside the caller's transaction. */
export async function pendingApprovalsOf(
  trx: Transaction<Database>,
  agentId: string,
  now: Date,
): Promise<number> {
  const row = await trx
    .selectFrom('approvals')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('agent_id', '=', agentId)
    .where('status', '=', 'pending')
    .where('expires_at', '>', now.toISOString())
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * Pending, unexpired approval requests of one principal of this agent, counted inside the caller's
 * transaction: `tokenUser` a token user's id (sessions with the token's permissions), null the
 * agent's own keys together (sessions without: keys, `on_behalf_of`, in-process callers), the same
 * principal as fair eviction's holder. A request whose session row is gone counts for nobody here
 * (it still counts for the agent's cap).
 */
export async function pendingApprovalsOfPrincipal(
  trx: Transaction<Database>,
  agentId: string,
  tokenUser: string | null,
  now: Date,
): Promise<number> {
  let query = trx
    .selectFrom('approvals')
    .innerJoin('sessions', 'sessions.id', 'approvals.session_id')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('approvals.agent_id', '=', agentId)
    .where('approvals.status', '=', 'pending')
    .where('approvals.expires_at', '>', now.toISOString());
  query =
    tokenUser === null
      ? query.where('sessions.user_permissions', 'is', null)
      : query
          .where('sessions.user_permissions', 'is not', null)
          .where('sessions.user_id', '=', tokenUser);
  const row = await query.executeTakeFirst();
  return Number(row?.n ?? 0);
}
