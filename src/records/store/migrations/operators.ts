/**
 * @module Migration of operator accounts: the accounts, their personal tokens (looked up by the
 * token's hash on every REST request, hence the unique index) and failed local logins per account.
 */
import { type Kysely, type Migration, sql } from 'kysely';

export const operatorsMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('operators')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('roles', 'text', (c) => c.notNull())
      .addColumn('teams', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('local','oidc')`))
      .addColumn('disabled', 'integer', (c) => c.notNull().check(sql`disabled in (0,1)`))
      .addColumn('password_hash', 'text')
      .addColumn('oidc_issuer', 'text')
      .addColumn('oidc_subject', 'text')
      .addColumn('email', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('operator_tokens')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('operator_id', 'text', (c) =>
        c.notNull().references('operators.id').onDelete('cascade'),
      )
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('roles', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('revoked_at', 'text')
      .execute();
    await db.schema
      .createIndex('operator_tokens_operator')
      .on('operator_tokens')
      .columns(['operator_id', 'created_at'])
      .execute();
    await db.schema
      .createTable('operator_login_attempts')
      .addColumn('operator_id', 'text', (c) => c.primaryKey())
      .addColumn('failures', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_ms', 'bigint', (c) => c.notNull())
      .addColumn('locked_until_ms', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
  },
};
