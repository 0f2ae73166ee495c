/**
 * @module Console sessions and pending single sign-on logins, in the database every replica
 * shares (a browser's next request may reach another replica). Only hashes of the browser's
 * secrets are stored. The inbox walks pending approvals by (status, created_at, id).
 */
import type { Kysely, Migration } from 'kysely';

export const consoleSessions: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('console_sessions')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('operator', 'text', (c) => c.notNull())
      .addColumn('operator_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_seen_at', 'text', (c) => c.notNull())
      .addColumn('idle_ms', 'integer', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('console_sessions_expiry')
      .on('console_sessions')
      .column('expires_at')
      .execute();
    await db.schema
      .createTable('console_logins')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('pending', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('approvals_inbox')
      .on('approvals')
      .columns(['status', 'created_at', 'id'])
      .execute();
  },
};
