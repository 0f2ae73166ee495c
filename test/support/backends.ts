/**
 * @module Runs a suite against every storage backend (docs/architecture.md §2): a fresh SQLite file and,
 * when the harness started one, a fresh PostgreSQL database. With TOOLGATE_REQUIRE_PG=1 a missing
 * server is a failure, never a silent skip.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, Migrator } from 'kysely';
import pg from 'pg';
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

/** Opens a migrated store on a fresh database; `close` also drops it. */
export async function freshStore(backend: Backend): Promise<Store & { url: string }> {
  const { url, drop } = await backend.fresh();
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
