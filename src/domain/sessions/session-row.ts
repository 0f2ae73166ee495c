/**
 * @module Reading a stored session row: its JSON fields, and the row without its permitted set.
 * A set of 10,000 tools is a text of close to a megabyte; decisions on counters other processes
 * move (budgets, policies reading them) need the counters as stored now, never the set again,
 * which changes only with the identity revision (refresh bumps it) and is already held
 * (docs/architecture.md §3, "Large sets").
 */
import type { Kysely } from 'kysely';
import type { Database, SessionRow } from '../../records/store/index.js';

/** Every column of a session row but the permitted set and what was withheld from it. */
export const SESSION_COLUMNS_BUT_SET = [
  'id',
  'agent_id',
  'user_id',
  'run_id',
  'created_at',
  'expires_at',
  'status',
  'private_data_read',
  'external_sends',
  'egress_bytes',
  'spend_cents',
  'user_permissions',
  'suspended',
  'credential',
  'untrusted_sources',
  'injection_seen',
  'last_used_at',
] as const;

/**
 * The session row as stored now, with `held`'s permitted set and withheld list (the same
 * session's, as the call already resolved against them); undefined when there is no such row.
 */
export async function rowKeepingSet(
  db: Kysely<Database>,
  sessionId: string,
  held: Pick<SessionRow, 'id' | 'tool_set' | 'withheld'>,
): Promise<SessionRow | undefined> {
  if (held.id !== sessionId) {
    // Never another session's set: read this one whole.
    return db.selectFrom('sessions').selectAll().where('id', '=', sessionId).executeTakeFirst();
  }
  const row = await db
    .selectFrom('sessions')
    .select(SESSION_COLUMNS_BUT_SET)
    .where('id', '=', sessionId)
    .executeTakeFirst();
  return row && { ...row, tool_set: held.tool_set, withheld: held.withheld };
}

/** The stored JSON list of a session's untrusted sources; anything unreadable is none. */
export function untrustedSourcesOf(text: string | null): string[] {
  if (text === null) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}
