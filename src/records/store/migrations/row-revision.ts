/** @module Per-row revisions, so caches (discovery) apply only what changed instead of rebuilding. */
import type { Kysely, Migration } from 'kysely';

export const rowRevision: Migration = {
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
