/**
 * @module The one list of migrations for both backends. Where the dialects differ (an
 * auto-increment key, trigger syntax) the migration asks which one it runs on; the tables,
 * columns and queries are otherwise identical.
 */
import { type Kysely, type Migration, type MigrationProvider, sql } from 'kysely';
import { chainRows, GENESIS_PREV_HASH, recordHash } from '../audit-chain/index.js';
import type { Database } from './database.js';
import { eventAuditRow } from './events.js';
import { classifiedArguments } from './migrations/classified-arguments.js';
import { consoleSessions } from './migrations/console-sessions.js';
import { healthOverrides } from './migrations/health-overrides.js';
import { idempotencyOutcomes } from './migrations/idempotency-outcomes.js';
import { operatorConfirmation } from './migrations/operator-confirmation.js';
import { operatorsMigration } from './migrations/operators.js';
import { ownerNotices } from './migrations/owner-notices.js';
import { providerEntries } from './migrations/provider-entries.js';
import { secondFactors } from './migrations/second-factors.js';
import { securityReviews } from './migrations/security-reviews.js';

export type Dialect = 'sqlite' | 'postgres';

function initial(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('tool_versions')
        .addColumn('tool_id', 'text', (c) => c.notNull())
        .addColumn('version', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('action_class', 'text', (c) => c.notNull())
        .addColumn('access_tier', 'text', (c) => c.notNull())
        .addColumn('data_access', 'text', (c) => c.notNull())
        .addColumn('egress_mode', 'text', (c) => c.notNull())
        .addColumn('provenance', 'text', (c) => c.notNull())
        .addColumn('tags', 'text', (c) => c.notNull())
        .addColumn('definition', 'text', (c) => c.notNull())
        .addColumn('definition_hash', 'text', (c) => c.notNull())
        .addColumn('lifecycle', 'text', (c) =>
          c.notNull().check(sql`lifecycle in ('draft','active','deprecated','retired')`),
        )
        .addColumn('quarantined', 'integer', (c) => c.notNull().check(sql`quarantined in (0,1)`))
        .addColumn('quarantine_findings', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('deprecated_at', 'text')
        .addColumn('retire_at', 'text')
        .addColumn('retired_at', 'text')
        .addPrimaryKeyConstraint('tool_versions_pk', ['tool_id', 'version'])
        .execute();
      await db.schema
        .createIndex('tool_versions_lifecycle')
        .on('tool_versions')
        .columns(['lifecycle', 'retire_at'])
        .execute();

      await db.schema
        .createTable('agents')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('display_name', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull().check(sql`enabled in (0,1)`))
        .addColumn('spec_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('grants')
        .addColumn('agent_id', 'text', (c) =>
          c.notNull().references('agents.id').onDelete('cascade'),
        )
        .addColumn('capability', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('grants_pk', ['agent_id', 'capability'])
        .execute();

      await db.schema
        .createTable('events')
        .addColumn('seq', dialect === 'sqlite' ? 'integer' : 'bigserial', (c) =>
          dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey(),
        )
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('via', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('details', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('events_subject')
        .on('events')
        .columns(['subject', 'seq'])
        .execute();

      // The events table is append-only; the audit chain relies on it.
      if (dialect === 'sqlite') {
        await sql`create trigger events_no_update before update on events
          begin select raise(abort, 'events are append-only'); end`.execute(db);
        await sql`create trigger events_no_delete before delete on events
          begin select raise(abort, 'events are append-only'); end`.execute(db);
      } else {
        await sql`create function toolgate_events_append_only() returns trigger language plpgsql as
          $$ begin raise exception 'events are append-only'; end $$`.execute(db);
        await sql`create trigger events_no_update before update or delete on events
          for each row execute function toolgate_events_append_only()`.execute(db);
        await sql`create trigger events_no_truncate before truncate on events
          for each statement execute function toolgate_events_append_only()`.execute(db);
      }

      await db.schema
        .createTable('meta')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
      await sql`insert into meta (key, value) values ('catalog_revision', '0')`.execute(db);
    },
  };
}

/** Per-row revisions, so caches (discovery) apply only what changed instead of rebuilding. */
const rowRevision: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('tool_versions')
      .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createIndex('tool_versions_revision')
      .on('tool_versions')
      .column('revision')
      .execute();
  },
};

/** Identity, sessions, limits, approvals and the call audit log (the gate). */
function gate(dialect: Dialect): Migration {
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
      await db.schema
        .createTable('audit_log')
        .addColumn('seq', dialect === 'sqlite' ? 'integer' : 'bigserial', (c) =>
          dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey(),
        )
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
      if (dialect === 'sqlite') {
        await sql`create trigger audit_no_update before update on audit_log
          begin select raise(abort, 'the audit log is append-only'); end`.execute(db);
        await sql`create trigger audit_no_delete before delete on audit_log
          begin select raise(abort, 'the audit log is append-only'); end`.execute(db);
      } else {
        await sql`create function toolgate_audit_append_only() returns trigger language plpgsql as
          $$ begin raise exception 'the audit log is append-only'; end $$`.execute(db);
        await sql`create trigger audit_no_update before update or delete on audit_log
          for each row execute function toolgate_audit_append_only()`.execute(db);
        await sql`create trigger audit_no_truncate before truncate on audit_log
          for each statement execute function toolgate_audit_append_only()`.execute(db);
      }
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

/** Organisation policies written in Cedar (kind Policy). */
const policies: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('policies')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('text', 'text', (c) => c.notNull())
      .addColumn('spec_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('updated_by', 'text', (c) => c.notNull())
      .execute();
  },
};

/** Permissions of a user named by a JWT claim, kept with the session that carried them. */
const sessionUserPermissions: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('sessions').addColumn('user_permissions', 'text').execute();
    // The TOTP step an approval used: one code approves once, across processes and replicas.
    await db.schema.alterTable('approvals').addColumn('totp_step', 'bigint').execute();
    await sql`create unique index approvals_totp_once on approvals (decided_by, totp_step) where totp_step is not null`.execute(
      db,
    );
  },
};

/** Four-eyes changes: privileged grants and irreversible tools wait for approvers. */
const changeRequests: Migration = {
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

/**
 * Secrets (C11): one row per tool × secret name × environment, the current version
 * only. The value is AES-256-GCM ciphertext under a master key that never enters the database;
 * `key_id` names that key so a wrong one is reported as such.
 */
const secrets: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('secrets')
      .addColumn('tool_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull().check(sql`version >= 1`))
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('nonce', 'text', (c) => c.notNull())
      .addColumn('ciphertext', 'text', (c) => c.notNull())
      .addColumn('tag', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('rotated_at', 'text')
      .addColumn('rotated_by', 'text')
      .addPrimaryKeyConstraint('secrets_pk', ['tool_id', 'name', 'environment'])
      .execute();
  },
};

/**
 * The audit chain: every audit record gets seq, prev_hash and its leaf hash; records
 * written before this migration are chained in seq order (renumbered gap-free), followed by the
 * events recorded so far; checkpoints get their own append-only table. From here on a row without
 * its chain is refused (NOT NULL on PostgreSQL, a trigger on SQLite, which cannot add NOT NULL).
 */
function auditChain(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('audit_log').addColumn('prev_hash', 'text').execute();
      await db.schema.alterTable('audit_log').addColumn('hash', 'text').execute();
      if (dialect === 'postgres') {
        // real (float4) would not give back the durations that were hashed.
        await sql`alter table audit_log alter column duration_ms type double precision`.execute(db);
        await sql`drop trigger audit_no_update on audit_log`.execute(db);
      } else {
        await sql`drop trigger audit_no_update`.execute(db);
      }
      const trx = db as Kysely<Database>;
      const old = await trx.selectFrom('audit_log').selectAll().orderBy('seq', 'asc').execute();
      let prev = GENESIS_PREV_HASH;
      for (const [i, row] of old.entries()) {
        const { prev_hash: _p, hash: _h, ...columns } = row;
        const linked = { ...columns, seq: i + 1, prev_hash: prev };
        const hash = recordHash(linked);
        await sql`update audit_log set seq = ${i + 1}, prev_hash = ${prev}, hash = ${hash}
          where seq = ${row.seq}`.execute(db);
        prev = hash;
      }
      const events = await trx.selectFrom('events').selectAll().orderBy('seq', 'asc').execute();
      const chained = chainRows(
        { seq: old.length, hash: prev },
        events.map((e) => eventAuditRow(e)),
      );
      for (const row of chained) await trx.insertInto('audit_log').values(row).execute();
      if (dialect === 'postgres') {
        await sql`create trigger audit_no_update before update or delete on audit_log
          for each row execute function toolgate_audit_append_only()`.execute(db);
        await sql`alter table audit_log alter column prev_hash set not null`.execute(db);
        await sql`alter table audit_log alter column hash set not null`.execute(db);
      } else {
        await sql`create trigger audit_no_update before update on audit_log
          begin select raise(abort, 'the audit log is append-only'); end`.execute(db);
        await sql`create trigger audit_chained before insert on audit_log
          when new.hash is null or new.prev_hash is null
          begin select raise(abort, 'audit records are appended through the chain'); end`.execute(
          db,
        );
      }
      await db.schema.createIndex('audit_hash').on('audit_log').columns(['hash']).execute();

      await db.schema
        .createTable('audit_checkpoints')
        .addColumn('id', dialect === 'sqlite' ? 'integer' : 'bigserial', (c) =>
          dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey(),
        )
        .addColumn('tree_size', 'bigint', (c) => c.notNull())
        .addColumn('root_hash', 'text', (c) => c.notNull())
        .addColumn('note', 'text', (c) => c.notNull())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('frontier', 'text')
        .execute();
      await db.schema
        .createIndex('audit_checkpoints_size')
        .on('audit_checkpoints')
        .columns(['tree_size'])
        .execute();
      if (dialect === 'sqlite') {
        await sql`create trigger audit_checkpoints_no_update before update on audit_checkpoints
          begin select raise(abort, 'audit checkpoints are append-only'); end`.execute(db);
        await sql`create trigger audit_checkpoints_no_delete before delete on audit_checkpoints
          begin select raise(abort, 'audit checkpoints are append-only'); end`.execute(db);
      } else {
        await sql`create trigger audit_checkpoints_no_update before update or delete
          on audit_checkpoints for each row execute function toolgate_audit_append_only()`.execute(
          db,
        );
        await sql`create trigger audit_checkpoints_no_truncate before truncate on audit_checkpoints
          for each statement execute function toolgate_audit_append_only()`.execute(db);
      }
    },
  };
}

/** A detector may suspend a session: its later calls are refused (SESSION_SUSPENDED). */
const sessionSuspension: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('sessions')
      .addColumn('suspended', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};

/** Upstream MCP providers: their specs and each imported tool's pin and state. */
const providers: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('providers')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('spec', 'text', (c) => c.notNull())
      .addColumn('spec_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('refreshed_at', 'text')
      .execute();
    await db.schema
      .createTable('provider_tools')
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('pin_hash', 'text', (c) => c.notNull())
      .addColumn('listing', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('reason', 'text')
      .addColumn('findings', 'text', (c) => c.notNull())
      .addColumn('classification', 'text')
      .addColumn('tool_id', 'text', (c) => c.notNull())
      .addColumn('tool_version', 'text')
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('provider_tools_pk', ['provider', 'name'])
      .execute();
  },
};

/**
 * The audit log keeps only indexes whose keys grow in order (seq, and call_id now that call ids
 * sort by time): a group commit then touches the right edge of each B-tree, a few pages, instead
 * of one random page per row per index. Lookups by leaf hash go through the Merkle tree the audit
 * log keeps in memory (its leaves are these hashes, in seq order); nothing read by session.
 */
const auditIndexes: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropIndex('audit_hash').ifExists().execute();
    await db.schema.dropIndex('audit_session').ifExists().execute();
  },
};

/**
 * A session remembers the credential that opened it (every request must present the
 * same), and approvers' second-factor attempts are counted where every replica sees them.
 */
const identityBinding: Migration = {
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

/**
 * Ceilings no new session or run resets: each agent's configured ceilings, and the
 * counters of their rolling windows, one row per (counter key, time bucket).
 */
const ceilings: Migration = {
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

/**
 * Per-agent caps count an agent's open sessions and pending approvals on every open and every
 * approval request; list pages walk approvals by (created_at, id). Indexes keep those off a scan.
 */
const agentCaps: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createIndex('sessions_agent_status')
      .on('sessions')
      .columns(['agent_id', 'status'])
      .execute();
    await db.schema
      .createIndex('approvals_agent_status')
      .on('approvals')
      .columns(['agent_id', 'status'])
      .execute();
    await db.schema
      .createIndex('approvals_page')
      .on('approvals')
      .columns(['created_at', 'id'])
      .execute();
  },
};

/**
 * The console's audit explorer finds records by agent and tool, by time, and lists the alerts.
 * Each index keys on `(column, seq)` or on `at`, which grows with seq, so a group commit adds at
 * the right edge of each value's range (a few pages per distinct agent or tool in the batch, never
 * one random page per row); alerts have a partial index that call records never touch. Users,
 * decisions and rules narrow these (or a walk by seq): every index here costs each group commit.
 */
const pagesAuditSearch: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    for (const column of ['agent_id', 'tool_id']) {
      await db.schema
        .createIndex(`audit_${column}_seq`)
        .on('audit_log')
        .columns([column, 'seq'])
        .execute();
    }
    await db.schema.createIndex('audit_at').on('audit_log').column('at').execute();
    await db.schema
      .createIndex('audit_alerts')
      .on('audit_log')
      .column('seq')
      .where(sql.ref('kind'), '=', 'alert')
      .execute();
  },
};

/**
 * A session remembers which untrusted sources entered it (tool ids whose results may carry text
 * written outside the organisation, JSON array; null: none) and whether any result held
 * instruction-like text; audit records and Cedar policies read both (docs/architecture.md §3).
 */
const untrustedSources: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('sessions').addColumn('untrusted_sources', 'text').execute();
    await db.schema
      .alterTable('sessions')
      .addColumn('injection_seen', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};

/**
 * Destination-like literals first seen in a run's untrusted results, by hash (docs/architecture.md
 * §3): a later sending or state-changing call carrying one is escalated. Keyed by run and hash, so
 * the lookup of a call's candidates is one index range and a repeated sighting is ignored.
 */
const destinationLiterals: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('destination_literals')
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('hash', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('tool_id', 'text', (c) => c.notNull())
      .addColumn('call_id', 'text', (c) => c.notNull())
      .addColumn('first_seen_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('destination_literals_pk', ['run_id', 'hash'])
      .execute();
  },
};

/**
 * Live destination sets and their members (docs/architecture.md §5): a tool's `destinations`
 * rule may name one; keyed by set and normalised value, so a membership test is one primary-key
 * read and a repeated add is ignored.
 */
const destinationSets: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('destination_sets')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull().check(sql`source in ('admin','directory')`))
      .addColumn('directory', 'text')
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('refreshed_at', 'text')
      .execute();
    await db.schema
      .createTable('destination_set_members')
      .addColumn('set_name', 'text', (c) =>
        c.notNull().references('destination_sets.name').onDelete('cascade'),
      )
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('added_at', 'text', (c) => c.notNull())
      .addColumn('added_by', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('destination_set_members_pk', ['set_name', 'value'])
      .execute();
  },
};

export function migrationProvider(dialect: Dialect): MigrationProvider {
  return {
    async getMigrations() {
      return {
        '0001_initial': initial(dialect),
        '0002_row_revision': rowRevision,
        '0003_gate': gate(dialect),
        '0004_policies': policies,
        '0005_session_user_permissions': sessionUserPermissions,
        '0006_change_requests': changeRequests,
        '0007_secrets': secrets,
        '0008_audit_chain': auditChain(dialect),
        '0009_session_suspension': sessionSuspension,
        '0010_providers': providers,
        '0011_audit_indexes': auditIndexes,
        '0012_identity_binding': identityBinding,
        '0013_ceilings': ceilings,
        '0014_agent_caps': agentCaps,
        '0015_operators': operatorsMigration,
        '0016_second_factors': secondFactors,
        '0017_security_reviews': securityReviews,
        '0018_console_sessions': consoleSessions,
        '0020_audit_search': pagesAuditSearch,
        '0022_provider_entries': providerEntries,
        '0025_untrusted_sources': untrustedSources,
        '0026_destination_literals': destinationLiterals,
        '0027_destination_sets': destinationSets,
        '0029_health_overrides': healthOverrides,
        '0033_owner_notices': ownerNotices,
        '0034_classified_arguments': classifiedArguments,
        '0036_idempotency_outcomes': idempotencyOutcomes,
        '0037_operator_confirmation': operatorConfirmation,
      };
    },
  };
}
