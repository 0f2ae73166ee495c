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
  return new SqliteDialect({ database });
}
