/**
 * @module Charging counters all or none (docs/architecture.md §5): a session's spend and the
 * rolling-window counters of a call (domain/limits/ceilings.ts builds them), each counter under
 * its key's lock, every sum checked against its limit before anything is written. The slot
 * `Store.chargeCounters` fills per dialect: SQLite runs the statements below in one transaction
 * (its first write takes the database's write lock); PostgreSQL calls one server-side function
 * (postgres/counter-charge.ts), so the locks are held only while the server runs it and never
 * across a round trip to a replica that may be waiting for a core.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from './database.js';
import { LOCK_CLASSES, type LockKey } from './key-lock.js';

/** One counter a call charges: its key, the bucket it adds to, and the buckets its sum covers. */
export interface CounterCharge {
  readonly key: string;
  readonly bucket: number;
  /** Lowest bucket the sum counts. */
  readonly from: number;
  readonly expiresAt: string;
  readonly amount: number;
  /** The sum after this charge may not pass it. */
  readonly limit: number;
}

/** A call's cost, charged to its session's spend (`budget`: the most it may reach). */
export interface SpendCharge {
  readonly sessionId: string;
  readonly cents: number;
  readonly budget: number | undefined;
}

/**
 * null: everything was charged. 'spend': the session's budget (or a session that is gone) refused
 * it; a number: the charge at that index would pass its limit. A refusal charged nothing.
 */
export type ChargeRefusal = null | 'spend' | number;

/**
 * Charges `spend` and `charges` (in the order given: callers sort them by key, so every
 * transaction takes the locks in one order), all or none. Inside a transaction (a dry run) the
 * charges join it and its locks last until it ends.
 */
export type ChargeCounters = (
  db: Kysely<Database>,
  spend: SpendCharge | null,
  charges: readonly CounterCharge[],
) => Promise<ChargeRefusal>;

/** The lock class of ceiling counters (the audit chain uses the one-key form). */
export const COUNTER_LOCK_CLASS = LOCK_CLASSES.ceilings;

class Refused extends Error {
  constructor(readonly refusal: Exclude<ChargeRefusal, null>) {
    super('refused');
  }
}

/** Adds `amount` to a counter's bucket (also what egress and private reads add after a call). */
export async function addToCounter(
  db: Kysely<Database>,
  c: Pick<CounterCharge, 'key' | 'bucket' | 'expiresAt'>,
  amount: number,
): Promise<void> {
  await sql`insert into ceiling_counters (key, bucket, amount, expires_at)
    values (${c.key}, ${c.bucket}, ${amount}, ${c.expiresAt})
    on conflict (key, bucket) do update set amount = ceiling_counters.amount + excluded.amount`.execute(
    db,
  );
}

/** A counter's sum over the buckets from `from` on. */
export async function counterTotal(
  db: Kysely<Database>,
  c: Pick<CounterCharge, 'key' | 'from'>,
): Promise<number> {
  const result = await sql<{ total: number }>`
    select cast(coalesce(sum(amount), 0) as bigint) as total from ceiling_counters
    where key = ${c.key} and bucket >= ${c.from}`.execute(db);
  return Number(result.rows[0]?.total ?? 0);
}

/**
 * The charge as statements in one transaction, each counter locked through `lockKey` (a no-op on
 * SQLite, where the transaction's first write serialises it with every other): adds first, checks
 * the sum after, and a refusal rolls everything back.
 */
export function chargeInTransaction(lockKey: LockKey): ChargeCounters {
  return async (db, spend, charges) => {
    const body = async (trx: Transaction<Database>): Promise<void> => {
      if (spend !== null) {
        const q = trx
          .updateTable('sessions')
          .set((eb) => ({ spend_cents: eb('spend_cents', '+', spend.cents) }))
          .where('id', '=', spend.sessionId);
        const result = await (spend.budget === undefined
          ? q
          : q.where(sql<boolean>`spend_cents + ${spend.cents} <= ${spend.budget}`)
        ).executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) throw new Refused('spend');
      }
      for (const [i, c] of charges.entries()) {
        await lockKey(trx, COUNTER_LOCK_CLASS, c.key);
        await addToCounter(trx, c, c.amount);
        if ((await counterTotal(trx, c)) > c.limit) throw new Refused(i);
      }
    };
    try {
      if (db.isTransaction) await body(db as Transaction<Database>);
      else await db.transaction().execute(body);
    } catch (error) {
      if (error instanceof Refused) return error.refusal;
      throw error;
    }
    return null;
  };
}
