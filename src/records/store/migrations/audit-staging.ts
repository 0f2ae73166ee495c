/**
 * @module Sequence-then-integrate (docs/architecture.md §5, "The audit log across replicas"): the
 * staging area where each process writes its audit records durably without a cross-replica lock,
 * and the last integrated link of each writer's stream. The elected sequencer moves staged
 * records into `audit_log` (assigning `seq` and the chain), checking each stream's links as it
 * goes. Created on both dialects so the schema stays one; SQLite's slot integrates at commit and
 * leaves both tables empty.
 */
import type { Kysely, Migration } from 'kysely';
import type { MigrationSql } from '../migration-sql.js';

export function auditStaging(dialect: MigrationSql): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('audit_staged')
        .addColumn('id', dialect.serialType, dialect.serialKey)
        .addColumn('stream', 'text', (c) => c.notNull())
        .addColumn('rseq', 'bigint', (c) => c.notNull())
        .addColumn('prev_hash', 'text', (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull())
        .addColumn('staged_at', 'text', (c) => c.notNull())
        .addColumn('record', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('audit_staged_stream')
        .on('audit_staged')
        .columns(['stream', 'rseq'])
        .unique()
        .execute();
      await db.schema
        .createTable('audit_stream_heads')
        .addColumn('stream', 'text', (c) => c.primaryKey())
        .addColumn('rseq', 'bigint', (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull())
        .addColumn('integrated_at', 'text', (c) => c.notNull())
        .execute();
    },
  };
}
