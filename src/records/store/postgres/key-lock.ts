/**
 * @module PostgreSQL's slot for serialising transactions on one key (Store.lockKey): a
 * transaction-scoped advisory lock, released when the transaction ends (docs/architecture.md §5).
 */
import { sql, type Transaction } from 'kysely';
import type { Database } from '../database.js';

export async function lockKey(
  trx: Transaction<Database>,
  classId: number,
  key: string,
): Promise<void> {
  await sql`select pg_advisory_xact_lock(${classId}, hashtext(${key}))`.execute(trx);
}
