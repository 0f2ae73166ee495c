/** @module Four-eyes changes: privileged grants and irreversible tools wait for approvers. */
import type { Kysely, Migration } from 'kysely';

export const changeRequests: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('change_requests')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text')
      .addColumn('capability', 'text')
      .addColumn('tool_id', 'text')
      .addColumn('tool_version', 'text')
      .addColumn('required', 'integer', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('requested_by', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('decided_at', 'text')
      .execute();
    await db.schema
      .createTable('change_approvals')
      .addColumn('change_id', 'text', (c) => c.notNull())
      .addColumn('approver_id', 'text', (c) => c.notNull())
      .addColumn('totp_step', 'bigint', (c) => c.notNull())
      .addColumn('at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('change_approvals_pk', ['change_id', 'approver_id'])
      .execute();
    await db.schema
      .createIndex('change_approvals_totp_once')
      .on('change_approvals')
      .columns(['approver_id', 'totp_step'])
      .unique()
      .execute();
  },
};
