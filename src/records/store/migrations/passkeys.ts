/**
 * @module Migration `0043_passkeys`: operators' passkeys (WebAuthn credentials: the public key
 * only, never a secret), the single-use challenges the server issued for them, and the assertions
 * stored with the decisions they signed (docs/architecture.md §6, "Passkeys bound to the
 * decision"). A four-eyes approval made with a passkey spends no TOTP step, so
 * `change_approvals.totp_step` becomes nullable (rebuilt: SQLite cannot drop a NOT NULL; the
 * unique (approver, step) index keeps every NULL apart, as `approvals_totp_once` does).
 */
import { type Kysely, type Migration, sql } from 'kysely';

async function rebuildChangeApprovals(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('change_approvals_v2')
    .addColumn('change_id', 'text', (c) => c.notNull())
    .addColumn('approver_id', 'text', (c) => c.notNull())
    .addColumn('totp_step', 'bigint')
    .addColumn('at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('change_approvals_v2_pk', ['change_id', 'approver_id'])
    .execute();
  await sql`insert into change_approvals_v2 (change_id, approver_id, totp_step, at) select change_id, approver_id, totp_step, at from change_approvals`.execute(
    db,
  );
  await db.schema.dropTable('change_approvals').execute();
  await db.schema.alterTable('change_approvals_v2').renameTo('change_approvals').execute();
  await db.schema
    .createIndex('change_approvals_totp_once')
    .on('change_approvals')
    .columns(['approver_id', 'totp_step'])
    .unique()
    .execute();
}

export const passkeys: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('operator_passkeys')
      // base64url of the credential id the authenticator chose.
      .addColumn('credential_id', 'text', (c) => c.primaryKey())
      .addColumn('operator_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      // base64url of the COSE public key.
      .addColumn('public_key', 'text', (c) => c.notNull())
      .addColumn('counter', 'bigint', (c) => c.notNull())
      .addColumn('transports', 'text', (c) => c.notNull())
      .addColumn('aaguid', 'text', (c) => c.notNull())
      .addColumn('backed_up', 'integer', (c) => c.notNull())
      .addColumn('rp_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('last_used_at', 'text')
      .execute();
    await db.schema
      .createIndex('operator_passkeys_operator')
      .on('operator_passkeys')
      .column('operator_id')
      .execute();
    await db.schema
      .createTable('passkey_challenges')
      // base64url; a decision's is the SHA-256 of its canonical commitment.
      .addColumn('challenge', 'text', (c) => c.primaryKey())
      .addColumn('purpose', 'text', (c) => c.notNull())
      .addColumn('operator_id', 'text')
      // A decision's canonical commitment (core/decision-commitment.ts); null otherwise.
      .addColumn('commitment', 'text')
      .addColumn('rp_id', 'text', (c) => c.notNull())
      .addColumn('origin', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .execute();
    await db.schema
      .createIndex('passkey_challenges_expiry')
      .on('passkey_challenges')
      .column('expires_at')
      .execute();
    await db.schema
      .createTable('decision_assertions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('subject_id', 'text', (c) => c.notNull())
      .addColumn('approver_id', 'text', (c) => c.notNull())
      .addColumn('credential_id', 'text', (c) => c.notNull())
      // The public key as it was when it signed: a passkey removed later still verifies here.
      .addColumn('public_key', 'text', (c) => c.notNull())
      .addColumn('commitment', 'text', (c) => c.notNull())
      .addColumn('challenge', 'text', (c) => c.notNull().unique())
      .addColumn('authenticator_data', 'text', (c) => c.notNull())
      .addColumn('client_data_json', 'text', (c) => c.notNull())
      .addColumn('signature', 'text', (c) => c.notNull())
      .addColumn('user_handle', 'text')
      .addColumn('rp_id', 'text', (c) => c.notNull())
      .addColumn('origin', 'text', (c) => c.notNull())
      .addColumn('at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('decision_assertions_subject')
      .on('decision_assertions')
      .columns(['kind', 'subject_id'])
      .execute();
    await rebuildChangeApprovals(db);
  },
};
