/**
 * @module Opens the database a `--db` URL names (`sqlite:PATH` or `postgres://…`) and brings its
 * schema up to date. The one place that knows which backend is in use.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { Kysely, Migrator, sql, type Transaction } from 'kysely';
import { useCursorKey } from '../../core/index.js';
import { type AuditAppend, bindAuditSlot, type RangeChecker } from './audit-append.js';
import { type ChargeCounters, chargeInTransaction } from './counter-charge.js';
import type { Database } from './database.js';
import type { SavedDatabase } from './database-copy.js';
import { parseDbUrl } from './db-url.js';
import { edgeDialect } from './edge-driver.js';
import { bindFleetNotify, type Fleet } from './fleet.js';
import { bindKeyLock } from './key-lock.js';
import type { Dialect } from './migration-sql.js';
import { migrationProvider } from './migrations/index.js';
import { auditAppend as postgresAuditAppend } from './postgres/audit-append.js';
import { saveDump } from './postgres/backup.js';
import { chargeCounters as postgresChargeCounters } from './postgres/counter-charge.js';
import { createPostgresDialect } from './postgres/dialect.js';
import { PostgresFleet, notify as postgresNotify } from './postgres/fleet.js';
import { lockKey as postgresLockKey } from './postgres/key-lock.js';
import { appliedMigrations, migrationFailure } from './schema-version.js';
import { auditAppend as sqliteAuditAppend } from './sqlite/audit-append.js';
import { saveFile } from './sqlite/backup.js';
import { createSqliteDialect, sqliteFiles } from './sqlite/dialect.js';
import { singleProcessFleet, notify as sqliteNotify } from './sqlite/fleet.js';
import { lockKey as sqliteLockKey } from './sqlite/key-lock.js';
import { sqliteRanges } from './sqlite/parallel-ranges.js';
import { storeError, storeUnavailable } from './store-errors.js';

export interface Store {
  readonly dialect: Dialect;
  readonly db: Kysely<Database>;
  /** Where the data lives, every secret in it `***` (db-url.ts); safe to print and to keep. */
  readonly location: string;
  /** The audit slot of this store's dialect (audit-append.ts): the audit log appends through it. */
  readonly audit: AuditAppend;
  /** The files that hold the data (an SQLite file with its journal and WAL; none for PostgreSQL). */
  readonly files: readonly string[];
  /**
   * Checks ranges of the audit log off this thread, where the dialect can (an SQLite file); null
   * elsewhere (PostgreSQL, memory): `audit verify` then reads in order.
   */
  readonly ranges: RangeChecker | null;
  /**
   * Serialises transactions on one key until `trx` ends: two transactions that lock the same
   * class and key run one after the other (a read-then-write on a shared counter stays exact).
   */
  lockKey(trx: Transaction<Database>, classId: number, key: string): Promise<void>;
  /**
   * Charges a session's spend and a call's counters all or none, each counter under its key's
   * lock (counter-charge.ts): one transaction on SQLite, one server-side function on PostgreSQL.
   */
  readonly chargeCounters: ChargeCounters;
  /**
   * What replicas on this database tell each other and which of them leads (fleet.ts): on
   * PostgreSQL one dedicated connection, made on first use; on SQLite this process alone.
   */
  readonly fleet: Fleet;
  /** The migrations the database holds, by name (once open: every one this version knows). */
  readonly migrations: readonly string[];
  /**
   * Saves a consistent copy of the database into `folder` while others go on writing (SQLite's
   * online backup API; pg_dump), or, where pg_dump is not installed, the command that does.
   */
  saveCopy(folder: string): Promise<SavedDatabase>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The key that authenticates page cursors (core/page.ts): 32 random bytes made by the first
 * process to open the database and kept in `meta`, so replicas and the CLI on one database
 * accept each other's cursors. Insert-if-absent, then read: two openers racing agree on one key.
 */
async function cursorKey(db: Kysely<Database>): Promise<Buffer> {
  // Read first: once the key exists, opening a store never writes, so it never waits for (or
  // deadlocks with) another process holding the write lock.
  const existing = await db
    .selectFrom('meta')
    .select('value')
    .where('key', '=', 'cursor_key')
    .executeTakeFirst();
  if (existing === undefined) {
    const fresh = randomBytes(32).toString('base64url');
    await sql`insert into meta (key, value) values ('cursor_key', ${fresh})
      on conflict (key) do nothing`.execute(db);
  }
  const row = await db
    .selectFrom('meta')
    .select('value')
    .where('key', '=', 'cursor_key')
    .executeTakeFirstOrThrow();
  const key = Buffer.from(row.value, 'base64url');
  if (key.length !== 32) throw storeError(new Error('meta.cursor_key is not a 32-byte key'));
  return key;
}

/**
 * False when `url` names an SQLite file that is missing or empty, which opening would turn into a
 * new database (a backup of it would be of nothing); a PostgreSQL server answers for itself.
 */
export function holdsDatabase(url: string): boolean {
  const { dialect, target } = parseDbUrl(url);
  if (dialect === 'postgres' || target === ':memory:') return true;
  return existsSync(target) && statSync(target).size > 0;
}

/**
 * The applied migrations when they are exactly the `known` ones, else none. A database already at
 * this version (every command after the first) opens without Kysely's migrator, whose check reads
 * every table's columns (about 50 ms of each CLI command on SQLite); any other database, new,
 * older or newer, goes through the migrator, which applies or refuses under its lock.
 */
async function upToDate(db: Kysely<Database>, known: readonly string[]): Promise<string[]> {
  let applied: string[];
  try {
    applied = await appliedMigrations(db);
  } catch {
    return []; // no migration table yet: a new database
  }
  const sorted = [...known].sort();
  const same = applied.length === sorted.length && applied.every((name, i) => name === sorted[i]);
  return same ? applied : [];
}

/**
 * Opens and migrates; on failure the connection is closed before the error is thrown. Errors are
 * the store's own (store-errors.ts): a database that cannot be reached is STORE_UNAVAILABLE, a
 * damaged file StoreCorruptError, here as from every later query.
 */
export async function openStore(url: string): Promise<Store> {
  const { dialect, target, location } = parseDbUrl(url);
  let sqlite: ReturnType<typeof createSqliteDialect> | null;
  try {
    sqlite = dialect === 'sqlite' ? createSqliteDialect(target) : null;
  } catch (err) {
    throw storeError(err);
  }
  // SQLite: every transaction waits for the write lock under the busy timeout (edge-driver.ts),
  // so a CLI command beside a running gateway waits instead of failing "database is locked".
  const edge = sqlite
    ? edgeDialect(sqlite.dialect, { immediateTransactions: true })
    : edgeDialect(createPostgresDialect(target));
  const db = new Kysely<Database>({ dialect: edge.dialect });
  const close = async () => {
    await sqlite?.stopCheckpointer();
    await edge.driver.destroy();
  };
  let migrations: string[];
  try {
    const provider = migrationProvider(dialect);
    migrations = await upToDate(db, Object.keys(await provider.getMigrations()));
    if (migrations.length === 0) {
      const { error } = await new Migrator({ db, provider }).migrateToLatest();
      // A database a newer toolgate upgraded: STORE_TOO_NEW, before anything ran (schema-version.ts).
      if (error) throw storeError(await migrationFailure(db, dialect, error));
      migrations = await appliedMigrations(db);
    }
    useCursorKey(await cursorKey(db).catch((err) => Promise.reject(storeError(err))));
  } catch (err) {
    await close();
    throw err;
  }
  const audit = sqlite ? sqliteAuditAppend(db, sqlite.database) : postgresAuditAppend(db);
  bindAuditSlot(db, audit);
  const lockKey = sqlite ? sqliteLockKey : postgresLockKey;
  bindKeyLock(db, lockKey);
  bindFleetNotify(db, sqlite ? sqliteNotify : postgresNotify);
  const fleet = sqlite ? singleProcessFleet() : new PostgresFleet(target);
  return {
    dialect,
    db,
    location,
    audit,
    files: sqlite ? sqliteFiles(target) : [],
    ranges: sqlite && target !== ':memory:' ? sqliteRanges(target) : null,
    lockKey,
    chargeCounters: sqlite ? chargeInTransaction(sqliteLockKey) : postgresChargeCounters,
    fleet,
    migrations,
    async saveCopy(folder) {
      const saved = sqlite
        ? await saveFile(sqlite.database, folder)
        : await saveDump(target, folder);
      return { dialect, ...saved };
    },
    async ping() {
      try {
        await sql`select 1`.execute(db);
      } catch {
        throw storeUnavailable();
      }
    },
    // Through the edge driver, not db.destroy(): later queries then answer STORE_UNAVAILABLE. On
    // SQLite, also wait for the checkpointer's connection to close: when this resolves, the
    // database files are settled (nothing removes or recreates -wal/-shm behind the caller).
    close: async () => {
      audit.release();
      await fleet.close();
      await close();
    },
  };
}
