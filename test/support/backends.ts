/**
 * @module Runs a suite against every storage backend (docs/architecture.md §2): a fresh SQLite file and,
 * when the harness started one, a fresh PostgreSQL database. With TOOLGATE_REQUIRE_PG=1 a missing
 * server is a failure, never a silent skip.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, Migrator, sql } from 'kysely';
import { PASSWORD_GROUP } from '../../scripts/postgres-harness.mjs';
import { type Database, openStore, type Store } from '../../src/records/store/index.js';
import { migrationProvider } from '../../src/records/store/migrations/index.js';
import { createPostgresDialect } from '../../src/records/store/postgres/dialect.js';
import { createSqliteDialect } from '../../src/records/store/sqlite/dialect.js';

export interface Backend {
  readonly name: 'sqlite' | 'postgres';
  /** A URL for a brand-new, empty database, and a function that removes it. */
  fresh(): Promise<{ url: string; drop: () => Promise<void> }>;
}

const sqlite: Backend = {
  name: 'sqlite',
  async fresh() {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-test-'));
    return {
      url: `sqlite:${join(dir, 'toolgate.db')}`,
      drop: async () =>
        rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }),
    };
  },
};

function postgres(adminUrl: string): Backend {
  return {
    name: 'postgres',
    async fresh() {
      const name = `tg_${randomBytes(6).toString('hex')}`;
      const { default: pg } = await import('pg');
      const admin = new pg.Client(adminUrl);
      await admin.connect();
      await admin.query(`create database ${name}`);
      await admin.end();
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      return {
        url: url.toString(),
        drop: async () => {
          const c = new pg.Client(adminUrl);
          await c.connect();
          await c.query(`drop database if exists ${name} with (force)`);
          await c.end();
        },
      };
    },
  };
}

export function backends(): Backend[] {
  const pgUrl = process.env.TOOLGATE_TEST_PG_URL;
  if (!pgUrl && process.env.TOOLGATE_REQUIRE_PG === '1') {
    throw new Error('TOOLGATE_REQUIRE_PG=1 but TOOLGATE_TEST_PG_URL is not set');
  }
  return pgUrl ? [sqlite, postgres(pgUrl)] : [sqlite];
}

/**
 * The environment variable naming a SQLite database the test runner migrated once for the whole
 * run (scripts/run-tests.mjs, `makeSqliteTemplate`): `migratedFresh` copies it instead of running
 * every migration again for each gateway a test opens (about 70 ms each).
 */
export const SQLITE_TEMPLATE_ENV = 'TOOLGATE_TEST_SQLITE_TEMPLATE';

/**
 * Migrates an empty SQLite database at `file` to the latest version and closes it, its log folded
 * into the file: the template `migratedFresh` copies. The cursor key is left out (every store
 * that opens a copy makes its own, as on a new database).
 */
export async function makeSqliteTemplate(file: string): Promise<void> {
  const { old, migrator } = unmigrated(sqlite, `sqlite:${file}`);
  try {
    const { error } = await migrator.migrateToLatest();
    if (error) throw error;
    await sql`pragma wal_checkpoint(truncate)`.execute(old);
  } finally {
    await old.destroy();
  }
}

/**
 * A fresh database of `backend` for a store that migrates it on opening: on SQLite, a copy of the
 * run's migrated template when there is one (the same rows a migration from empty writes), else
 * `backend.fresh()`'s empty file. Tests of the migrations themselves use `backend.fresh()`.
 */
export async function migratedFresh(
  backend: Backend,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const fresh = await backend.fresh();
  const template = process.env[SQLITE_TEMPLATE_ENV];
  if (backend.name === 'sqlite' && template && existsSync(template)) {
    copyFileSync(template, fresh.url.slice('sqlite:'.length));
  }
  return fresh;
}

/** Opens a migrated store on a fresh database; `close` also drops it. */
export async function freshStore(backend: Backend): Promise<Store & { url: string }> {
  const { url, drop } = await migratedFresh(backend);
  const store = await openStore(url);
  return {
    ...store,
    url,
    ping: store.ping,
    close: async () => {
      await store.close();
      await drop();
    },
  };
}

/**
 * The database at `url` opened without migrating it, and a migrator over it: an upgrade test
 * brings it to an older version, writes rows as that version did, then opens the store.
 */
export function unmigrated(
  backend: Backend,
  url: string,
): { old: Kysely<Database>; migrator: Migrator } {
  const target = backend.name === 'sqlite' ? url.slice('sqlite:'.length) : url;
  const old = new Kysely<Database>({
    dialect:
      backend.name === 'sqlite'
        ? createSqliteDialect(target).dialect
        : createPostgresDialect(target),
  });
  return { old, migrator: new Migrator({ db: old, provider: migrationProvider(backend.name) }) };
}

/** A database owned by a role that signs in with a password, on the tests' PostgreSQL. */
export interface PasswordDatabase {
  readonly user: string;
  readonly password: string;
  /** `postgres://USER@HOST:PORT/DATABASE`: the password is for the caller to place. */
  readonly url: string;
  /** The server's `HOST:PORT`. */
  readonly server: string;
  readonly database: string;
  drop(): Promise<void>;
}

/**
 * A new role with `password`, member of the harness's group that signs in with SCRAM
 * (scripts/postgres-harness.mjs, PASSWORD_GROUP: a wrong password is refused, unlike the trusted
 * `toolgate`), and a new database it owns.
 */
export async function passwordDatabase(
  adminUrl: string,
  password: string,
): Promise<PasswordDatabase> {
  const suffix = randomBytes(6).toString('hex');
  const user = `tgpw_${suffix}`;
  const database = `tg_${suffix}`;
  const { default: pg } = await import('pg');
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  try {
    await admin.query(
      `create role ${user} login password ${admin.escapeLiteral(password)} in role ${PASSWORD_GROUP}`,
    );
    await admin.query(`create database ${database} owner ${user}`);
  } finally {
    await admin.end();
  }
  const server = new URL(adminUrl).host;
  return {
    user,
    password,
    url: `postgres://${user}@${server}/${database}`,
    server,
    database,
    drop: async () => {
      const c = new pg.Client(adminUrl);
      await c.connect();
      try {
        await c.query(`drop database if exists ${database} with (force)`);
        await c.query(`drop role if exists ${user}`);
      } finally {
        await c.end();
      }
    },
  };
}
