/**
 * @module Migration `0047_approval_scopes`: an approval a reviewer gave with an explicit, bounded
 * scope (docs/operators-and-approvals.md, "Scoped approvals"): the principal and run it was asked
 * in, the tool version and the hash of the call's destination values it binds, its bounds (calls,
 * an amount in cents, a time) and what has been used of them, counted by one conditional update so
 * that concurrent calls never pass a bound; who granted it and who revoked it.
 */
import type { Kysely, Migration } from 'kysely';

export const approvalScopes: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('approval_scopes')
      .addColumn('approval_id', 'text', (c) => c.primaryKey())
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text')
      .addColumn('credential', 'text')
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('tool_id', 'text', (c) => c.notNull())
      .addColumn('tool_version', 'text', (c) => c.notNull())
      .addColumn('destinations_hash', 'text', (c) => c.notNull())
      .addColumn('max_calls', 'integer', (c) => c.notNull())
      .addColumn('used_calls', 'integer', (c) => c.notNull())
      .addColumn('max_cents', 'bigint')
      .addColumn('used_cents', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('granted_by', 'text', (c) => c.notNull())
      .addColumn('granted_at', 'text', (c) => c.notNull())
      .addColumn('revoked_by', 'text')
      .addColumn('revoked_at', 'text')
      .addColumn('revoke_reason', 'text')
      .execute();
    await db.schema
      .createIndex('approval_scopes_binding')
      .on('approval_scopes')
      .columns(['agent_id', 'run_id', 'tool_id', 'tool_version', 'destinations_hash'])
      .execute();
  },
};
