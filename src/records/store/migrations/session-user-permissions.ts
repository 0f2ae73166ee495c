/** @module Permissions of a user named by a JWT claim, kept with the session that carried them. */
import { type Kysely, type Migration, sql } from 'kysely';

export const sessionUserPermissions: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('sessions').addColumn('user_permissions', 'text').execute();
    // The TOTP step an approval used: one code approves once, across processes and replicas.
    await db.schema.alterTable('approvals').addColumn('totp_step', 'bigint').execute();
    await sql`create unique index approvals_totp_once on approvals (decided_by, totp_step) where totp_step is not null`.execute(
      db,
    );
  },
};
