/**
 * @module Admins' overrides of a tool version's health state (C14): one row per version in force,
 * with the reason and expiry, in the database every replica shares. Each change is also an event
 * (and so an audit record) written in the same transaction (docs/architecture.md §8, C14).
 */
import type { Kysely, Migration } from 'kysely';

export const healthOverrides: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('tool_health_overrides')
      .addColumn('tool_id', 'text', (c) => c.notNull())
      .addColumn('version', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('set_by', 'text', (c) => c.notNull())
      .addColumn('set_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('tool_health_overrides_pk', ['tool_id', 'version'])
      .execute();
  },
};
