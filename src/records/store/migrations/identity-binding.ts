/**
 * @module A session remembers the credential that opened it (every request must present the
 * same), and approvers' second-factor attempts are counted where every replica sees them.
 */
import type { Kysely, Migration } from 'kysely';

export const identityBinding: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('sessions').addColumn('credential', 'text').execute();
    await db.schema
      .createTable('totp_attempts')
      .addColumn('approver_id', 'text', (c) => c.primaryKey())
      .addColumn('failures', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_ms', 'bigint', (c) => c.notNull())
      .addColumn('locked_until_ms', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
  },
};
