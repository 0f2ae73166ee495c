/**
 * @module SQLite's slot for serialising transactions on one key (Store.lockKey): nothing to do,
 * since every write transaction here is immediate and so already runs alone (edge-driver.ts,
 * docs/architecture.md §5).
 */
import type { Transaction } from 'kysely';
import type { Database } from '../database.js';

export async function lockKey(
  _trx: Transaction<Database>,
  _classId: number,
  _key: string,
): Promise<void> {}
