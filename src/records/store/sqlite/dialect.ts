/** @module The embedded SQLite backend: one file, WAL, every commit synced before it returns. */

import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  openSync,
  type Stats,
  statSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import { SqliteDialect } from 'kysely';
import { makeDirs, notRegularFile, ToolgateError } from '../../../core/index.js';

/** The embedded database's own handle, for the few hot paths that bypass the query builder. */
export type SqliteHandle = BetterSqlite3.Database;

/**
 * How long a statement waits for another connection's write lock before SQLITE_BUSY: a running
 * gateway's group commit holds it for milliseconds, a CLI command's transaction for a little more.
 */
export const SQLITE_BUSY_TIMEOUT_MS = 10_000;

export function createSqliteDialect(path: string): {
  dialect: SqliteDialect;
  database: SqliteHandle;
  /**
   * Stops the background checkpointer and settles once its connection is closed (bounded), so
   * that the gateway's own connection, closed next, is the last one: SQLite then checkpoints the
   * whole WAL into the database and removes it before the store's close returns.
   */
  stopCheckpointer: () => Promise<void>;
} {
  if (path !== ':memory:') {
    makeDirs(dirname(path), 0o700);
    privateDatabaseFiles(path);
  }
  const database = new BetterSqlite3(path);
  // First: the CLI and a running server share the file, so every statement from here on —
  // switching to WAL and the migrations' check included — waits for the writer instead of failing.
  database.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  database.pragma('journal_mode = WAL');
  // FULL: a record the gateway acknowledged is on disk, also after power loss (C12).
  database.pragma('synchronous = FULL');
  database.pragma('foreign_keys = ON');
  const checkpointer = path === ':memory:' ? null : startCheckpointer(database, path);
  const exited = checkpointer
    ? new Promise<void>((resolve) => checkpointer.once('exit', () => resolve()))
    : Promise.resolve();
  return {
    dialect: new SqliteDialect({ database: withStatementCache(database, checkpointer) }),
    database,
    // Bounded: a checkpointer that does not exit in time is left to the process's own exit.
    stopCheckpointer: () => {
      checkpointer?.ref();
      checkpointer?.postMessage('close');
      return Promise.race([
        exited,
        new Promise<void>((resolve) => setTimeout(resolve, 5_000).unref()),
      ]);
    },
  };
}

/**
 * The database holds the audit log, key hashes and sealed secrets: it is created 0600 (whatever
 * the umask), and an existing one readable by others is narrowed to 0600. SQLite creates its
 * -wal and -shm files, now and whenever it recreates them, with the database file's own mode,
 * so they are 0600 too; any already there are narrowed as well.
 */
function privateDatabaseFiles(path: string): void {
  // A FIFO, device or folder given as the database would block the open below (a FIFO opened for
  // writing waits for a reader) or be written to: only a regular file, or none yet, is a database.
  const sidecars = [`${path}-wal`, `${path}-shm`, `${path}-journal`];
  for (const file of [path, ...sidecars]) refuseNonRegular(path, file, () => statSync(file));
  // Creates an empty file (a new database to SQLite) or leaves an existing one untouched;
  // O_NONBLOCK so that a FIFO put there since the check fails (ENXIO) instead of blocking, and
  // the opened descriptor is checked again.
  const fd = openSync(
    path,
    constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_NONBLOCK,
    0o600,
  );
  try {
    refuseNonRegular(path, path, () => fstatSync(fd));
  } finally {
    closeSync(fd);
  }
  for (const file of [path, ...sidecars]) {
    try {
      if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
    } catch (err) {
      // Missing is fine (not created yet). Not ours to change (EPERM): SQLite still opens it,
      // and its owner chose its mode.
      const code = (err as { code?: string }).code;
      if (code !== 'ENOENT' && code !== 'EPERM') throw err;
    }
  }
}

/** Refuses (INPUT_INVALID naming --db) a database file that exists and is not a regular file. */
function refuseNonRegular(path: string, file: string, stat: () => Stats): void {
  let stats: Stats;
  try {
    stats = stat();
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return;
    throw err;
  }
  const what = notRegularFile(stats);
  if (what === null) return;
  throw new ToolgateError(
    'INPUT_INVALID',
    `cannot use --db sqlite:${path}: ${file} ${what}, not a regular file`,
    { problems: [] },
  );
}

/** WAL pages past which a commit checkpoints by itself: only if the background one falls behind. */
const FALLBACK_AUTOCHECKPOINT_PAGES = 16_384;
const CHECKPOINT_INTERVAL_MS = 250;

/**
 * Copies the WAL back into the database from a worker thread with its own connection, so that no
 * commit on the gateway's connection pays for a checkpoint (SQLite's default runs one inside
 * every commit that finds the WAL over 1,000 pages, and better-sqlite3 runs it on the event
 * loop). PASSIVE never blocks writers. If the worker stops, the commit-time fallback still bounds
 * the WAL.
 */
function startCheckpointer(database: BetterSqlite3.Database, path: string): Worker | null {
  database.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
  let module: string;
  try {
    module = createRequire(import.meta.url).resolve('better-sqlite3');
  } catch {
    database.pragma('wal_autocheckpoint = 1000');
    return null;
  }
  const code = `
    const { workerData, parentPort } = require('node:worker_threads');
    const Database = require(workerData.module);
    const db = new Database(workerData.path);
    db.pragma('busy_timeout = 1000');
    const timer = setInterval(() => {
      try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {}
    }, workerData.interval);
    parentPort.on('message', () => { clearInterval(timer); db.close(); process.exit(0); });
  `;
  const worker = new Worker(code, {
    eval: true,
    workerData: { module, path, interval: CHECKPOINT_INTERVAL_MS },
  });
  worker.unref();
  worker.on('error', () => {
    // Checkpoints fall back to commit time; nothing is lost. The database may be closed by now.
    try {
      database.pragma('wal_autocheckpoint = 1000');
    } catch {}
  });
  return worker;
}

const STATEMENT_CACHE_SIZE = 256;

/**
 * Kysely prepares every query afresh; the gate runs the same few statements on every call, so
 * prepared statements are kept by SQL text (least recently used dropped past 256). Safe because
 * Kysely runs one query at a time on this connection and toolgate never streams from SQLite.
 */
function withStatementCache(
  database: BetterSqlite3.Database,
  checkpointer: Worker | null,
): BetterSqlite3.Database {
  const cache = new Map<string, BetterSqlite3.Statement>();
  const prepare = database.prepare.bind(database);
  const close = () => {
    // The store stops the checkpointer first (stopCheckpointer); a close that did not is still
    // followed by it, held (ref) until it exits.
    checkpointer?.ref();
    checkpointer?.postMessage('close');
    return database.close();
  };
  return new Proxy(database, {
    get(target, property, receiver) {
      if (property === 'close') return close;
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

/** The files an SQLite database at `path` keeps its data in; none in memory. */
export function sqliteFiles(path: string): string[] {
  if (path === ':memory:') return [];
  return [path, `${path}-wal`, `${path}-shm`, `${path}-journal`];
}
