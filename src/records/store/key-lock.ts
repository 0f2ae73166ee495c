/**
 * @module Serialising transactions on one key from any transaction of a store (docs/architecture.md
 * §5): the slot `Store.lockKey` fills per dialect (sqlite/key-lock.ts: nothing, every write there
 * runs alone; postgres/key-lock.ts: a transaction-scoped advisory lock), bound once by openStore
 * so a service holding only the database finds it from its transaction, as `appendEvent` finds the
 * audit slot. Lock classes are listed here, one per kind of key, so no two kinds share one.
 *
 * A lock is taken first in its transaction, before anything that takes another lock (an
 * `appendEvent` takes the audit chain's): two transactions then always wait in the same order.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './database.js';

export type LockKey = (trx: Transaction<Database>, classId: number, key: string) => Promise<void>;

/** The lock classes (32-bit, four ASCII letters), one per kind of key. */
export const LOCK_CLASSES = {
  /** Ceiling counters, by counter key (domain/limits/ceilings.ts). */
  ceilings: 0x7467_6365, // "tgce"
  /** The operator accounts, one key: every write of an account or as an operator (Y9). */
  operators: 0x7467_6f70, // "tgop"
  /** Destination sets, by name: the member cap (domain/policy/destination-set-writes.ts). */
  destinationSets: 0x7467_6473, // "tgds"
  /** Owner channels, by team: the per-team cap (operations/owners/owner-channels.ts). */
  ownerChannels: 0x7467_6f63, // "tgoc"
  /** Pending security reviews, by registrant: the per-registrant cap (catalog/security-review.ts). */
  reviewQueue: 0x7467_7271, // "tgrq"
  /** Owner notices sent, by team: the per-team hourly cap (operations/owners/owner-notices.ts). */
  ownerNotices: 0x7467_6f6e, // "tgon"
  /**
   * The fleet's leader (fleet.ts), key 0: a session-level lock, held by the leader's dedicated
   * connection for as long as it lives, never by a transaction.
   */
  leader: 0x7467_6c64, // "tgld"
} as const;

const slots = new WeakMap<object, LockKey>();

/** Called once by openStore: `db` and every transaction on it lock through `lock`. */
export function bindKeyLock(db: Kysely<Database>, lock: LockKey): void {
  // Kysely hands one adapter object to the database and to each of its transactions.
  slots.set(db.getExecutor().adapter, lock);
}

/**
 * Serialises `trx` with every other transaction that locks the same class and key, until it ends
 * (Store.lockKey, found from the transaction).
 */
export function lockKeyIn(trx: Transaction<Database>, classId: number, key: string): Promise<void> {
  const lock = slots.get(trx.getExecutor().adapter);
  if (!lock) throw new TypeError('this database was not opened by openStore: it has no key lock');
  return lock(trx, classId, key);
}
