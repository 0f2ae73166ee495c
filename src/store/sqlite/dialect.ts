/** @module The embedded SQLite backend: one file, WAL, every commit synced before it returns. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { SqliteDialect } from 'kysely';

export function createSqliteDialect(path: string): SqliteDialect {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const database = new BetterSqlite3(path);
  database.pragma('journal_mode = WAL');
  // FULL: a record the gateway acknowledged is on disk, also after power loss (DESIGN.md C12).
  database.pragma('synchronous = FULL');
  database.pragma('foreign_keys = ON');
  // The CLI and a running server share the file; wait for the writer instead of failing.
  database.pragma('busy_timeout = 5000');
  return new SqliteDialect({ database: withStatementCache(database) });
}

const STATEMENT_CACHE_SIZE = 256;

/**
 * Kysely prepares every query afresh; the gate runs the same few statements on every call, so
 * prepared statements are kept by SQL text (least recently used dropped past 256). Safe because
 * Kysely runs one query at a time on this connection and toolgate never streams from SQLite.
 */
function withStatementCache(database: BetterSqlite3.Database): BetterSqlite3.Database {
  const cache = new Map<string, BetterSqlite3.Statement>();
  const prepare = database.prepare.bind(database);
  return new Proxy(database, {
    get(target, property, receiver) {
      if (property !== 'prepare') return Reflect.get(target, property, receiver);
      return (sql: string) => {
        const hit = cache.get(sql);
        if (hit) {
          cache.delete(sql);
          cache.set(sql, hit);
          return hit;
        }
        const statement = prepare(sql);
        cache.set(sql, statement);
        if (cache.size > STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
        return statement;
      };
    },
  });
}
