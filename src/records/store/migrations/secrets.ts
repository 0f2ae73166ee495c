/**
 * @module Secrets (C11): one row per tool × secret name × environment, the current version
 * only. The value is AES-256-GCM ciphertext under a master key that never enters the database;
 * `key_id` names that key so a wrong one is reported as such.
 */
import { type Kysely, type Migration, sql } from 'kysely';

export const secrets: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('secrets')
      .addColumn('tool_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull().check(sql`version >= 1`))
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('nonce', 'text', (c) => c.notNull())
      .addColumn('ciphertext', 'text', (c) => c.notNull())
      .addColumn('tag', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('rotated_at', 'text')
      .addColumn('rotated_by', 'text')
      .addPrimaryKeyConstraint('secrets_pk', ['tool_id', 'name', 'environment'])
      .execute();
  },
};
