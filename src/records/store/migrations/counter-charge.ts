/**
 * @module Charging counters in one statement where the database can (counter-charge.ts): on
 * PostgreSQL the function `toolgate_charge`, which locks, checks and writes a call's counters
 * server-side, so no lock is held across a round trip to a replica. Nothing on SQLite.
 */
import type { Kysely, Migration } from 'kysely';
import type { MigrationSql } from '../migration-sql.js';

export function counterCharge(dialect: MigrationSql): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect.counterCharge(db);
    },
  };
}
