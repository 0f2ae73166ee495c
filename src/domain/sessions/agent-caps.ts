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
}

export const DEFAULT_AGENT_CAPS: AgentCaps = {
  maxSessionsPerAgent: 64,
  maxPendingApprovalsPerAgent: 50,
};

/** Caps must be positive integers: a zero or fractional cap is a configuration mistake. */
export function resolveAgentCaps(input: Partial<AgentCaps> = {}): AgentCaps {
  const caps = { ...DEFAULT_AGENT_CAPS, ...input };
  for (const [name, value] of Object.entries(caps)) {
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

/**
 * Inserts the session row unless the agent already holds `max` open, unexpired sessions; then it
 * throws LIMIT_REACHED and writes nothing. Never evicts: an agent frees its own slots.
 */
export async function insertSessionWithinCap(
  db: Kysely<Database>,
  row: SessionRow,
  max: number,
  now: Date,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await lockAgent(trx, row.agent_id);
    const open = await trx
      .selectFrom('sessions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('agent_id', '=', row.agent_id)
      .where('status', '=', 'open')
      .where('expires_at', '>', now.toISOString())
      .executeTakeFirst();
    if (Number(open?.n ?? 0) >= max) {
      throw new ToolgateError(
        'LIMIT_REACHED',
        `agent ${row.agent_id} has ${max} open sessions; close one (DELETE /v1/sessions/{id}) first`,
        { limit: 'sessions_per_agent', max, retryAfterSeconds: SESSION_CAP_RETRY_AFTER_S },
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
