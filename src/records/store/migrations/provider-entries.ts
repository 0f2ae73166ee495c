/**
 * @module Upstream MCP resources, resource templates and prompts of each provider: pinned,
 * scanned and classified as its tools are (provider_tools), keyed by kind and the upstream's own
 * key (a resource's URI, a template's URI template, a prompt's name).
 */
import type { Kysely, Migration } from 'kysely';

export const providerEntries: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('provider_entries')
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('pin_hash', 'text', (c) => c.notNull())
      .addColumn('listing', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('reason', 'text')
      .addColumn('findings', 'text', (c) => c.notNull())
      .addColumn('classification', 'text')
      .addColumn('tool_id', 'text', (c) => c.notNull())
      .addColumn('tool_version', 'text')
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('provider_entries_pk', ['provider', 'kind', 'key'])
      .execute();
  },
};
