/**
 * @module The audit chain: every audit record gets seq, prev_hash and its leaf hash; records
 * written before this migration are chained in seq order (renumbered gap-free), followed by the
 * events recorded so far; checkpoints get their own append-only table. From here on a row without
 * its chain is refused (NOT NULL on PostgreSQL, a trigger on SQLite, which cannot add NOT NULL).
 */
import { type Kysely, type Migration, sql } from 'kysely';
import { chainRows, GENESIS_PREV_HASH, recordHash } from '../../audit-chain/index.js';
import type { Database } from '../database.js';
import { eventAuditRow } from '../events.js';
import type { MigrationSql } from '../migration-sql.js';

export function auditChain(dialect: MigrationSql): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('audit_log').addColumn('prev_hash', 'text').execute();
      await db.schema.alterTable('audit_log').addColumn('hash', 'text').execute();
      await dialect.openAuditLogForChain(db);
      const trx = db as Kysely<Database>;
      const old = await trx.selectFrom('audit_log').selectAll().orderBy('seq', 'asc').execute();
      let prev = GENESIS_PREV_HASH;
      for (const [i, row] of old.entries()) {
        const { prev_hash: _p, hash: _h, ...columns } = row;
        const linked = { ...columns, seq: i + 1, prev_hash: prev };
        const hash = recordHash(linked);
        await sql`update audit_log set seq = ${i + 1}, prev_hash = ${prev}, hash = ${hash}
          where seq = ${row.seq}`.execute(db);
        prev = hash;
      }
      const events = await trx.selectFrom('events').selectAll().orderBy('seq', 'asc').execute();
      const chained = chainRows(
        { seq: old.length, hash: prev },
        events.map((e) => eventAuditRow(e)),
      );
      for (const row of chained) await trx.insertInto('audit_log').values(row).execute();
      await dialect.closeAuditLogAfterChain(db);
      await db.schema.createIndex('audit_hash').on('audit_log').columns(['hash']).execute();

      await db.schema
        .createTable('audit_checkpoints')
        .addColumn('id', dialect.serialType, dialect.serialKey)
        .addColumn('tree_size', 'bigint', (c) => c.notNull())
        .addColumn('root_hash', 'text', (c) => c.notNull())
        .addColumn('note', 'text', (c) => c.notNull())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('frontier', 'text')
        .execute();
      await db.schema
        .createIndex('audit_checkpoints_size')
        .on('audit_checkpoints')
        .columns(['tree_size'])
        .execute();
      // PostgreSQL's guard says the audit log's message, as it always has.
      await dialect.appendOnly(db, {
        table: 'audit_checkpoints',
        prefix: 'audit_checkpoints',
        message: 'audit checkpoints are append-only',
        guard: { name: 'toolgate_audit_append_only', create: false },
      });
    },
  };
}
