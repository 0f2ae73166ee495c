/**
 * @module Migration 0033: owner teams' notification channels and the marks that deduplicate the
 * notices they get (docs/architecture.md §8, C16). A channel's URL is stored for delivery and never
 * shown again (a Slack webhook URL is itself a credential). A mark is one row per (kind, tool,
 * version): claimed by one conditional upsert, so replicas sharing the database send a notice once.
 */
import type { Kysely, Migration } from 'kysely';

export const ownerNotices: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('owner_channels')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('owner_channels_team_url')
      .on('owner_channels')
      .columns(['team', 'url'])
      .unique()
      .execute();
    await db.schema
      .createTable('owner_notice_marks')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('tool_id', 'text', (c) => c.notNull())
      .addColumn('tool_version', 'text', (c) => c.notNull())
      .addColumn('sent_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('owner_notice_marks_pk', ['kind', 'tool_id', 'tool_version'])
      .execute();
  },
};
