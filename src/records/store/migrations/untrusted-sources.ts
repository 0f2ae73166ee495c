/**
 * @module A session remembers which untrusted sources entered it (tool ids whose results may carry text
 * written outside the organisation, JSON array; null: none) and whether any result held
 * instruction-like text; audit records and Cedar policies read both (docs/architecture.md §3).
 */
import type { Kysely, Migration } from 'kysely';

export const untrustedSources: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('sessions').addColumn('untrusted_sources', 'text').execute();
    await db.schema
      .alterTable('sessions')
      .addColumn('injection_seen', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
