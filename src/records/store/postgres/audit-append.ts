/**
 * @module PostgreSQL's audit slot (the interface: ../audit-append.ts). The chain lock is
 * `pg_advisory_xact_lock` on one key every replica shares, released at commit; PostgreSQL syncs
 * at commit, so every batch is durable when its transaction returns. docs/architecture.md §5.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import { chainRows, linkInPlace } from '../../audit-chain/index.js';
import {
  type AuditAppend,
  type AuditCommit,
  insertChained,
  type RawArgumentsRow,
  readHead,
  type UnchainedRow,
} from '../audit-append.js';
import type { AuditRow, Database, NewAuditRow } from '../database.js';

/** Any 64-bit number, the same for every replica: the lock that orders audit appends. */
export const CHAIN_LOCK_KEY = 7_220_410_006n;

async function lockChain(trx: Transaction<Database>): Promise<void> {
  await sql`select pg_advisory_xact_lock(${sql.lit(CHAIN_LOCK_KEY.toString())}::bigint)`.execute(
    trx,
  );
}

export function auditAppend(db: Kysely<Database>): AuditAppend {
  return {
    async commit(rows: UnchainedRow[], raw: readonly RawArgumentsRow[]): Promise<AuditCommit> {
      const written = await db.transaction().execute(async (trx) => {
        let chained: NewAuditRow[] = [];
        if (rows.length > 0) {
          await lockChain(trx);
          chained = linkInPlace(await readHead(trx), rows);
          await insertChained(trx, chained, 'numbered');
        }
        if (raw.length > 0) {
          await trx
            .insertInto('call_arguments')
            .values(raw)
            .onConflict((oc) => oc.column('call_id').doNothing())
            .execute();
        }
        return chained;
      });
      return { rows: written, durable: null };
    },

    async appendIn(trx, rows) {
      if (rows.length === 0) return [];
      await lockChain(trx);
      const chained = chainRows(await readHead(trx), rows);
      await insertChained(trx, chained, 'numbered');
      return chained;
    },

    page(after: number, limit: number): Promise<AuditRow[]> {
      return db
        .selectFrom('audit_log')
        .selectAll()
        .where('seq', '>', after)
        .orderBy('seq', 'asc')
        .limit(limit)
        .execute();
    },

    release() {},
  };
}
