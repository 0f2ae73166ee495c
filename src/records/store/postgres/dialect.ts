/**
 * @module The PostgreSQL backend, for several gateway replicas sharing one catalog. The driver is
 * loaded when the first connection is made: a gateway on SQLite (the default) never loads it.
 */
import { PostgresDialect } from 'kysely';
import type { Pool, PoolClient } from 'pg';
import { connectionError } from '../store-errors.js';

const INT8_OID = 20;

export function createPostgresDialect(connectionString: string): PostgresDialect {
  return new PostgresDialect({ pool: () => createPool(connectionString) });
}

async function createPool(connectionString: string): Promise<Pool> {
  const { default: pg } = await import('pg');
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
  // An idle client dropped by the server (restart, failover) must not crash the gateway; the pool
  // replaces it and the next query reconnects.
  pool.on('error', () => {});
  // A client in use when the server goes away also emits 'error'; without a listener that is
  // an uncaught exception that would take the whole gateway down. The query itself still
  // rejects, and the front answers 503 STORE_UNAVAILABLE.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  // What stops a connection at its start is the deployment's state, never a bug: each such error
  // is STORE_UNAVAILABLE naming its cause (store-errors.ts). Kysely connects without a callback.
  const connect = pool.connect.bind(pool) as () => Promise<PoolClient>;
  pool.connect = ((...args: unknown[]) => {
    if (args.length > 0) return (connect as (...a: unknown[]) => unknown)(...args);
    return connect().catch((err: unknown) => Promise.reject(connectionError(err)));
  }) as Pool['connect'];
  return pool;
}
