/**
 * @module Opens the database a `--db` URL names (`sqlite:PATH` or `postgres://…`) and brings its
 * schema up to date. The one place that knows which backend is in use.
 */
import { resolve } from 'node:path';
import { Kysely, Migrator, sql } from 'kysely';
import { ToolgateError } from '../core/index.js';
import type { Database } from './database.js';
import { type Dialect, migrationProvider } from './migrations.js';
import { createPostgresDialect } from './postgres/dialect.js';
import { createSqliteDialect, type SqliteHandle } from './sqlite/dialect.js';

export interface Store {
  readonly dialect: Dialect;
  readonly db: Kysely<Database>;
  /** Where the data lives, with any password removed; safe to print. */
  readonly location: string;
  /**
   * The SQLite handle behind `db` (null on PostgreSQL), for hot paths that run prepared statements
   * directly. Use only inside `db.connection().execute(…)`, which keeps every other query off the
   * connection meanwhile.
   */
  readonly sqlite: SqliteHandle | null;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export const DEFAULT_DB_URL = 'sqlite:./data/toolgate.db';

export function parseDbUrl(url: string): { dialect: Dialect; target: string; location: string } {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '')
      throw new TypeError('sqlite: URL needs a path, e.g. sqlite:./data/toolgate.db');
    const target = path === ':memory:' ? path : resolve(path);
    return { dialect: 'sqlite', target, location: `sqlite:${target}` };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return { dialect: 'postgres', target: url, location: parsed.toString() };
  }
  throw new TypeError(
    `unsupported database URL "${url.split(':')[0]}:…": use sqlite:PATH or postgres://…`,
  );
}

/** Opens and migrates; on failure the connection is closed before the error is thrown. */
export async function openStore(url: string): Promise<Store> {
  const { dialect, target, location } = parseDbUrl(url);
  const sqlite = dialect === 'sqlite' ? createSqliteDialect(target) : null;
  const db = new Kysely<Database>({
    dialect: sqlite ? sqlite.dialect : createPostgresDialect(target),
  });
  try {
    const migrator = new Migrator({ db, provider: migrationProvider(dialect) });
    const { error } = await migrator.migrateToLatest();
    if (error) throw error;
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return {
    dialect,
    db,
    location,
    sqlite: sqlite?.database ?? null,
    async ping() {
      try {
        await sql`select 1`.execute(db);
      } catch {
        throw new ToolgateError('STORE_UNAVAILABLE', 'the database cannot be reached', {});
      }
    },
    // On SQLite, also wait for the checkpointer's connection to close: when this resolves, the
    // database files are settled (nothing removes or recreates -wal/-shm behind the caller).
    close: async () => {
      await db.destroy();
      await sqlite?.checkpointerClosed();
    },
  };
}
