/**
 * @module Per-agent caps on what everyone shares: open gate sessions and pending
 * approvals. Counting and inserting happen under a lock on the agent's row, so parallel opens of
 * one agent cannot slip past the cap on PostgreSQL either.
 */
import type { Kysely, Transaction } from 'kysely';
import { problem, ToolgateError } from '../../core/index.js';
import type { Database, SessionRow } from '../../records/store/index.js';

export interface AgentCaps {
  /** Open, unexpired gate sessions of one agent (REST, MCP and library alike). */
  readonly maxSessionsPerAgent: number;
  /** Pending, unexpired approval requests of one agent across all its sessions. */
  readonly maxPendingApprovalsPerAgent: number;
  /**
   * The share (0 < share ≤ 1) of the agent's session cap one user its tokens vouch for (a JWT or
   * OAuth token's user) may hold, at least one session: one user of a multi-user host app cannot
   * take every slot from the others and from the agent's own keys.
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

/**
 * Inserts the session row unless the agent already holds `caps.maxSessionsPerAgent` open,
 * unexpired sessions, or (`tokenUser`: the row's user is the one the caller's token vouches for)
 * that user holds their share of them (maxSessionsPerUser); then it throws LIMIT_REACHED and
 * writes nothing. Never evicts: a caller frees its own slots.
 */
export async function insertSessionWithinCap(
  db: Kysely<Database>,
  row: SessionRow,
  caps: Pick<AgentCaps, 'maxSessionsPerAgent' | 'userSessionShare'>,
  now: Date,
  tokenUser: boolean,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await lockAgent(trx, row.agent_id);
    const max = caps.maxSessionsPerAgent;
    if ((await openSessionsOf(trx, row.agent_id, null, now)) >= max) {
      throw new ToolgateError(
        'LIMIT_REACHED',
        `agent ${row.agent_id} has ${max} open sessions; close one (DELETE /v1/sessions/{id}) first`,
        { limit: 'sessions_per_agent', max, retryAfterSeconds: SESSION_CAP_RETRY_AFTER_S },
      );
    }
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
    await trx.insertInto('sessions').values(row).execute();
  });
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
