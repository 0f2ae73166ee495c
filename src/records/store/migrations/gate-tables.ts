/** @module Identity, sessions, limits, approvals and the call audit log (the gate). */
import { type Kysely, type Migration, sql } from 'kysely';
import type { MigrationSql } from '../migration-sql.js';

export function gate(dialect: MigrationSql): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('agents')
        .addColumn('tier', 'text', (c) => c.notNull().defaultTo('restricted'))
        .execute();
      await db.schema
        .alterTable('agents')
        .addColumn('budgets', 'text', (c) => c.notNull().defaultTo('{}'))
        .execute();
      await db.schema
        .createTable('agent_keys')
        .addColumn('key_id', 'text', (c) => c.primaryKey())
        .addColumn('agent_id', 'text', (c) =>
          c.notNull().references('agents.id').onDelete('cascade'),
        )
        .addColumn('secret_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('display_name', 'text', (c) => c.notNull())
        .addColumn('permissions', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('spec_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text')
        .addColumn('run_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('tool_set', 'text', (c) => c.notNull())
        .addColumn('withheld', 'text', (c) => c.notNull())
        .addColumn('private_data_read', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('external_sends', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('egress_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('spend_cents', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createTable('rate_counters')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('approvals')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text')
        .addColumn('tool_id', 'text', (c) => c.notNull())
        .addColumn('tool_version', 'text', (c) => c.notNull())
        .addColumn('action_class', 'text', (c) => c.notNull())
        .addColumn('args_hash', 'text', (c) => c.notNull())
        .addColumn('rendered', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('second_factor', 'integer', (c) => c.notNull())
        .addColumn('out_of_band', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('decided_at', 'text')
        .addColumn('decided_by', 'text')
        .addColumn('reason', 'text')
        .addColumn('token', 'text')
        .addColumn('token_id', 'text')
        .addColumn('consumed_at', 'text')
        .execute();
      await db.schema
        .createIndex('approvals_lookup')
        .on('approvals')
        .columns(['session_id', 'tool_id', 'args_hash', 'status'])
        .execute();
      await createAuditLog(db, dialect);
      await db.schema
        .createTable('call_arguments')
        .addColumn('call_id', 'text', (c) => c.primaryKey())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('args', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('idempotency')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('args_hash', 'text', (c) => c.notNull())
        .addColumn('call_id', 'text', (c) => c.notNull())
        .addColumn('result', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
    },
  };
}

/** The call audit log: append-only from its first row. */
async function createAuditLog(db: Kysely<unknown>, dialect: MigrationSql): Promise<void> {
  await db.schema
    .createTable('audit_log')
    .addColumn('seq', dialect.serialType, dialect.serialKey)
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('call_id', 'text')
    .addColumn('trace_id', 'text')
    .addColumn('session_id', 'text')
    .addColumn('run_id', 'text')
    .addColumn('agent_id', 'text')
    .addColumn('user_id', 'text')
    .addColumn('tool_id', 'text')
    .addColumn('tool_version', 'text')
    .addColumn('args_hash', 'text')
    .addColumn('args_redacted', 'text')
    .addColumn('decision', 'text', (c) => c.notNull())
    .addColumn('code', 'text')
    .addColumn('rule', 'text')
    .addColumn('message', 'text')
    .addColumn('approval_id', 'text')
    .addColumn('approver', 'text')
    .addColumn('egress_host', 'text')
    .addColumn('bytes_out', 'integer')
    .addColumn('duration_ms', 'real')
    .addColumn('outcome', 'text')
    .addColumn('model', 'text')
    .addColumn('details', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_call').on('audit_log').columns(['call_id']).execute();
  await db.schema
    .createIndex('audit_session')
    .on('audit_log')
    .columns(['session_id', 'seq'])
    .execute();
  await dialect.appendOnly(db, {
    table: 'audit_log',
    prefix: 'audit',
    message: 'the audit log is append-only',
    guard: { name: 'toolgate_audit_append_only', create: true },
  });
}
