/** @module The migrations' SQLite statements (migration-sql.ts): triggers raise, keys autoincrement. */
import { sql } from 'kysely';
import type { MigrationSql } from '../migration-sql.js';

export const sqliteMigrationSql: MigrationSql = {
  dialect: 'sqlite',
  serialType: 'integer',
  serialKey: (column) => column.primaryKey().autoIncrement(),
  async appendOnly(db, { table, prefix, message }) {
    await sql`create trigger ${sql.raw(`${prefix}_no_update`)} before update on ${sql.raw(table)}
          begin select raise(abort, ${sql.lit(message)}); end`.execute(db);
    await sql`create trigger ${sql.raw(`${prefix}_no_delete`)} before delete on ${sql.raw(table)}
          begin select raise(abort, ${sql.lit(message)}); end`.execute(db);
  },
  async openAuditLogForChain(db) {
    await sql`drop trigger audit_no_update`.execute(db);
  },
  async closeAuditLogAfterChain(db) {
    await sql`create trigger audit_no_update before update on audit_log
          begin select raise(abort, 'the audit log is append-only'); end`.execute(db);
    // SQLite cannot add NOT NULL to a column: a trigger refuses the row instead.
    await sql`create trigger audit_chained before insert on audit_log
          when new.hash is null or new.prev_hash is null
          begin select raise(abort, 'audit records are appended through the chain'); end`.execute(
      db,
    );
  },
  async counterCharge() {
    // A transaction of plain statements charges here (counter-charge.ts): nothing to create.
  },
  async keepStagingUntruncated() {
    // SQLite stages nothing (its slot links at commit), and has no vacuum truncation lock.
  },
};
