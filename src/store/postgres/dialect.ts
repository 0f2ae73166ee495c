/** @module The PostgreSQL backend, for several gateway replicas sharing one catalog. */
import { PostgresDialect } from 'kysely';
import pg from 'pg';

const INT8_OID = 20;

export function createPostgresDialect(connectionString: string): PostgresDialect {
  const pool = new pg.Pool({
    connectionString,
    max: 10,
    // bigserial sequence numbers come back as numbers, as they do from SQLite.
    types: {
      getTypeParser: (oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID
          ? (value: string) => Number(value)
          : pg.types.getTypeParser(oid, format ?? 'text'),
    },
  });
  return new PostgresDialect({ pool });
}
