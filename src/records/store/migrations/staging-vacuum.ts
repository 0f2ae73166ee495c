/**
 * @module The staging table is never truncated by vacuum (docs/architecture.md §5, "The audit log
 * across replicas"): `audit_staged` fills and empties all the time, and autovacuum's truncation of
 * its empty tail takes an AccessExclusive lock that every replica's staging insert would wait on.
 * PostgreSQL only (`vacuum_truncate = off`); nothing on SQLite, which stages nothing.
 */
import type { Kysely, Migration } from 'kysely';
import type { MigrationSql } from '../migration-sql.js';

export function stagingVacuum(dialect: MigrationSql): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect.keepStagingUntruncated(db);
    },
  };
}
