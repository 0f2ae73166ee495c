/**
 * @module What a driver's error means, whichever backend, and its translation at the store's edge
 * (src/records/store/edge-driver.ts): "the database cannot be reached" becomes
 * `ToolgateError('STORE_UNAVAILABLE')` and damaged data becomes `StoreCorruptError`, so no caller
 * of the store ever looks at a driver's codes: docs/architecture.md §5.
 */
import { StoreCorruptError, ToolgateError } from '../../core/index.js';

/** Node socket errors and PostgreSQL SQLSTATEs for connection loss, shutdown and overload. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EPIPE',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '08000', // connection_exception
  '08001', // sqlclient_unable_to_establish_sqlconnection
  '08003', // connection_does_not_exist
  '08006', // connection_failure
  '53300', // too_many_connections
  'SQLITE_CANTOPEN',
  'SQLITE_IOERR',
]);

/**
 * True when `err` says the store is down or gone rather than that a query was wrong, so fronts
 * can answer 503 STORE_UNAVAILABLE (retry later) instead of 500.
 */
function isUnavailable(code: unknown, message: unknown): boolean {
  if (
    typeof code === 'string' &&
    (UNAVAILABLE_CODES.has(code) || code.startsWith('SQLITE_IOERR'))
  ) {
    return true;
  }
  return (
    typeof message === 'string' &&
    (message.includes('driver has already been destroyed') ||
      message.includes('The database connection is not open') ||
      message.includes('Connection terminated'))
  );
}

/** PostgreSQL's SQLSTATEs for data and index corruption, and SQLite's file that is no database. */
const CORRUPT_CODES = new Set(['XX001', 'XX002', 'SQLITE_NOTADB']);

/**
 * True for a damaged database file (SQLite's "database disk image is malformed", a file that is
 * not a database; PostgreSQL's data or index corruption): reading on will not help.
 */
function isCorrupt(code: unknown): code is string {
  return typeof code === 'string' && (CORRUPT_CODES.has(code) || code.startsWith('SQLITE_CORRUPT'));
}

/**
 * SQLite's "database is locked" in every spelling (SQLITE_BUSY and its extended codes, e.g.
 * BUSY_SNAPSHOT, BUSY_RECOVERY, BUSY_TIMEOUT; SQLITE_LOCKED): another connection held the lock past
 * the busy timeout. Nothing was written by the statement; trying again later is safe.
 */
function isBusy(code: unknown): boolean {
  return (
    typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))
  );
}

/** The database stayed locked by another process past the wait: a 503 that says so. */
export function storeBusy(): ToolgateError<'STORE_UNAVAILABLE'> {
  return new ToolgateError(
    'STORE_UNAVAILABLE',
    'the database stayed locked by another process (a running gateway or command) past the wait; nothing was changed by this statement, try again',
    {},
  );
}

/** The unavailable error every front answers 503 to; the driver's words stay out of it. */
export function storeUnavailable(): ToolgateError<'STORE_UNAVAILABLE'> {
  return new ToolgateError('STORE_UNAVAILABLE', 'the database cannot be reached', {});
}

/**
 * A driver's error as the store reports it: STORE_UNAVAILABLE, StoreCorruptError, or the error
 * itself (a constraint, a syntax error: the caller's to handle). Errors already translated pass.
 */
export function storeError(err: unknown): unknown {
  if (typeof err !== 'object' || err === null || err instanceof ToolgateError) return err;
  if (err instanceof StoreCorruptError) return err;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (isBusy(code)) return storeBusy();
  if (isUnavailable(code, message)) return storeUnavailable();
  if (isCorrupt(code)) {
    return new StoreCorruptError(code, typeof message === 'string' ? message : 'unreadable', {
      cause: err,
    });
  }
  return err;
}

/** Throws `storeError(err)`: the rejection handler of every query at the edge. */
export function rethrowStoreError(err: unknown): never {
  throw storeError(err);
}

/** A primary-key or unique conflict, as SQLite and PostgreSQL each spell it. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    code === '23505' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    code === 'SQLITE_CONSTRAINT_UNIQUE'
  );
}
