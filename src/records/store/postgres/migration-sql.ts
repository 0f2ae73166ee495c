/**
 * @module The migrations' PostgreSQL statements (migration-sql.ts): bigserial keys, and triggers
 * that call one plpgsql function per guard, truncate included.
 */
import { sql } from 'kysely';
import type { MigrationSql } from '../migration-sql.js';
import { CHARGE_FUNCTION } from './counter-charge.js';

export const postgresMigrationSql: MigrationSql = {
  dialect: 'postgres',
  serialType: 'bigserial',
  serialKey: (column) => column.primaryKey(),
  async appendOnly(db, { table, prefix, message, guard }) {
    if (guard.create) {
      await sql`create function ${sql.raw(guard.name)}() returns trigger language plpgsql as
          $$ begin raise exception ${sql.lit(message)}; end $$`.execute(db);
    }
    await sql`create trigger ${sql.raw(`${prefix}_no_update`)} before update or delete on ${sql.raw(table)}
          for each row execute function ${sql.raw(guard.name)}()`.execute(db);
    await sql`create trigger ${sql.raw(`${prefix}_no_truncate`)} before truncate on ${sql.raw(table)}
          for each statement execute function ${sql.raw(guard.name)}()`.execute(db);
  },
  async openAuditLogForChain(db) {
    // real (float4) would not give back the durations that were hashed.
    await sql`alter table audit_log alter column duration_ms type double precision`.execute(db);
    await sql`drop trigger audit_no_update on audit_log`.execute(db);
  },
  async closeAuditLogAfterChain(db) {
    await sql`create trigger audit_no_update before update or delete on audit_log
          for each row execute function toolgate_audit_append_only()`.execute(db);
    await sql`alter table audit_log alter column prev_hash set not null`.execute(db);
    await sql`alter table audit_log alter column hash set not null`.execute(db);
  },
  async counterCharge(db) {
    await sql.raw(CHARGE_FUNCTION).execute(db);
  },
  async keepStagingUntruncated(db) {
    await sql`alter table audit_staged set (vacuum_truncate = off)`.execute(db);
  },
};
