/** @module A detector may suspend a session: its later calls are refused (SESSION_SUSPENDED). */
import type { Kysely, Migration } from 'kysely';

export const sessionSuspension: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('sessions')
      .addColumn('suspended', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
