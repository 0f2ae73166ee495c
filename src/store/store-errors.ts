/** @module Recognizes errors that mean "the database cannot be reached", whichever backend. */

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
  'SQLITE_BUSY',
  'SQLITE_CANTOPEN',
  'SQLITE_IOERR',
]);

/**
 * True when `err` says the store is down or gone rather than that a query was wrong, so fronts
 * can answer 503 STORE_UNAVAILABLE (retry later) instead of 500.
 */
export function isStoreUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
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

/** A primary-key or unique conflict, as SQLite and PostgreSQL each spell it. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    code === '23505' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    code === 'SQLITE_CONSTRAINT_UNIQUE'
  );
}

/** PostgreSQL's SQLSTATEs for data and index corruption. */
const CORRUPT_CODES = new Set(['XX001', 'XX002', 'SQLITE_NOTADB']);

/**
 * True when `err` says the database file itself is damaged (SQLite's "database disk image is
 * malformed", a file that is not a database; PostgreSQL's data or index corruption): reading on
 * will not help, and the audit verifier reports it as a finding rather than crashing.
 */
export function isStoreCorrupt(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (CORRUPT_CODES.has(code) || code.startsWith('SQLITE_CORRUPT'));
}
