/**
 * @module The one list of migrations for both backends. Where the dialects differ (an
 * auto-increment key, trigger syntax) the migration asks which one it runs on; the tables,
 * columns and queries are otherwise identical.
 */
import { type Kysely, type Migration, type MigrationProvider, sql } from 'kysely';

export type Dialect = 'sqlite' | 'postgres';

function initial(dialect: Dialect): Migration {
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
        .addColumn('seq', dialect === 'sqlite' ? 'integer' : 'bigserial', (c) =>
          dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey(),
        )
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

      // The events table is append-only; the audit chain (issue 6) will rely on it.
      if (dialect === 'sqlite') {
        await sql`create trigger events_no_update before update on events
          begin select raise(abort, 'events are append-only'); end`.execute(db);
        await sql`create trigger events_no_delete before delete on events
          begin select raise(abort, 'events are append-only'); end`.execute(db);
      } else {
        await sql`create function toolgate_events_append_only() returns trigger language plpgsql as
          $$ begin raise exception 'events are append-only'; end $$`.execute(db);
        await sql`create trigger events_no_update before update or delete on events
          for each row execute function toolgate_events_append_only()`.execute(db);
        await sql`create trigger events_no_truncate before truncate on events
          for each statement execute function toolgate_events_append_only()`.execute(db);
      }

      await db.schema
        .createTable('meta')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
      await sql`insert into meta (key, value) values ('catalog_revision', '0')`.execute(db);
    },
  };
}

/** Per-row revisions, so caches (discovery) apply only what changed instead of rebuilding. */
const rowRevision: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('tool_versions')
      .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createIndex('tool_versions_revision')
      .on('tool_versions')
      .column('revision')
      .execute();
  },
};

export function migrationProvider(dialect: Dialect): MigrationProvider {
  return {
    async getMigrations() {
      return { '0001_initial': initial(dialect), '0002_row_revision': rowRevision };
    },
  };
}
