/** @module The first tables: tool versions, agents, grants, the append-only events, meta. */
import { type Kysely, type Migration, sql } from 'kysely';
import type { MigrationSql } from '../migration-sql.js';

export function initial(dialect: MigrationSql): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('tool_versions')
        .addColumn('tool_id', 'text', (c) => c.notNull())
        .addColumn('version', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('action_class', 'text', (c) => c.notNull())
        .addColumn('access_tier', 'text', (c) => c.notNull())
        .addColumn('data_access', 'text', (c) => c.notNull())
        .addColumn('egress_mode', 'text', (c) => c.notNull())
        .addColumn('provenance', 'text', (c) => c.notNull())
        .addColumn('tags', 'text', (c) => c.notNull())
        .addColumn('definition', 'text', (c) => c.notNull())
        .addColumn('definition_hash', 'text', (c) => c.notNull())
        .addColumn('lifecycle', 'text', (c) =>
          c.notNull().check(sql`lifecycle in ('draft','active','deprecated','retired')`),
        )
        .addColumn('quarantined', 'integer', (c) => c.notNull().check(sql`quarantined in (0,1)`))
        .addColumn('quarantine_findings', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('deprecated_at', 'text')
        .addColumn('retire_at', 'text')
        .addColumn('retired_at', 'text')
        .addPrimaryKeyConstraint('tool_versions_pk', ['tool_id', 'version'])
        .execute();
      await db.schema
        .createIndex('tool_versions_lifecycle')
        .on('tool_versions')
        .columns(['lifecycle', 'retire_at'])
        .execute();

      await db.schema
        .createTable('agents')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('display_name', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull().check(sql`enabled in (0,1)`))
        .addColumn('spec_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('grants')
        .addColumn('agent_id', 'text', (c) =>
          c.notNull().references('agents.id').onDelete('cascade'),
        )
        .addColumn('capability', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('grants_pk', ['agent_id', 'capability'])
        .execute();

      await db.schema
        .createTable('events')
        .addColumn('seq', dialect.serialType, dialect.serialKey)
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('via', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('details', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('events_subject')
        .on('events')
        .columns(['subject', 'seq'])
        .execute();

      // The events table is append-only; the audit chain relies on it.
      await dialect.appendOnly(db, {
        table: 'events',
        prefix: 'events',
        message: 'events are append-only',
        guard: { name: 'toolgate_events_append_only', create: true },
      });

      await db.schema
        .createTable('meta')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
      await sql`insert into meta (key, value) values ('catalog_revision', '0')`.execute(db);
    },
  };
}
