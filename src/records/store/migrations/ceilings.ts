/**
 * @module Ceilings no new session or run resets: each agent's configured ceilings, and the
 * counters of their rolling windows, one row per (counter key, time bucket).
 */
import type { Kysely, Migration } from 'kysely';

export const ceilings: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('agents')
      .addColumn('ceilings', 'text', (c) => c.notNull().defaultTo('{}'))
      .execute();
    await db.schema
      .createTable('ceiling_counters')
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('bucket', 'bigint', (c) => c.notNull())
      .addColumn('amount', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('ceiling_counters_pk', ['key', 'bucket'])
      .execute();
    await db.schema
      .createIndex('ceiling_counters_expiry')
      .on('ceiling_counters')
      .column('expires_at')
      .execute();
  },
};
