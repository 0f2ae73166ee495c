/** @module Upstream MCP providers: their specs and each imported tool's pin and state. */
import type { Kysely, Migration } from 'kysely';

export const providers: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('providers')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('spec', 'text', (c) => c.notNull())
      .addColumn('spec_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('refreshed_at', 'text')
      .execute();
    await db.schema
      .createTable('provider_tools')
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('pin_hash', 'text', (c) => c.notNull())
      .addColumn('listing', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('reason', 'text')
      .addColumn('findings', 'text', (c) => c.notNull())
      .addColumn('classification', 'text')
      .addColumn('tool_id', 'text', (c) => c.notNull())
      .addColumn('tool_version', 'text')
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('provider_tools_pk', ['provider', 'name'])
      .execute();
  },
};
