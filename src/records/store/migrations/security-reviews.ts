/**
 * @module Migration: security reviews of tool definitions (C1). One row per definition that needs
 * a review, keyed by the hash it reviews: opened pending at registration, decided once by an
 * approver. A changed definition is a new row; a decision never carries over.
 */
import type { Kysely, Migration } from 'kysely';

export const securityReviews: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('security_reviews')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tool_id', 'text', (c) => c.notNull())
      .addColumn('version', 'text', (c) => c.notNull())
      .addColumn('definition_hash', 'text', (c) => c.notNull())
      .addColumn('reasons', 'text', (c) => c.notNull())
      .addColumn('go_live', 'integer', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('registered_by', 'text', (c) => c.notNull())
      .addColumn('registered_at', 'text', (c) => c.notNull())
      .addColumn('reviewer', 'text')
      .addColumn('reviewed_at', 'text')
      .addColumn('notes', 'text')
      .execute();
    await db.schema
      .createIndex('security_reviews_definition')
      .on('security_reviews')
      .columns(['tool_id', 'version', 'definition_hash'])
      .unique()
      .execute();
    await db.schema
      .createIndex('security_reviews_page')
      .on('security_reviews')
      .columns(['status', 'registered_at', 'id'])
      .execute();
  },
};
