/**
 * @module What a driver's error means, whichever backend, and its translation at the store's edge
 * (src/records/store/edge-driver.ts): "the database cannot be reached" becomes
 * `ToolgateError('STORE_UNAVAILABLE')` and damaged data becomes `StoreCorruptError`, so no caller
 * of the store ever looks at a driver's codes: docs/architecture.md §5.
 */
import { StoreCorruptError, ToolgateError } from '../../core/index.js';

/** Node socket errors, and the driver's words, for a server that cannot be reached or went away. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EPIPE',
  'SQLITE_CANTOPEN',
  'SQLITE_IOERR',
]);

/**
 * PostgreSQL refusing or ending a connection, by SQLSTATE class (PostgreSQL's appendix A): what
 * the operator is told, in toolgate's words. The server's own message is left out: it names roles
 * and databases, and a REST client is answered with the same error.
 */
const REFUSALS: readonly (readonly [prefix: string, cause: string])[] = [
  ['08', 'the connection failed'],
  ['28', 'it refused the credentials (a wrong password, an unknown role, or pg_hba.conf)'],
  ['3D', 'the database named does not exist'],
  ['53', 'the server is out of resources (too many connections, memory or disk)'],
  ['57P0', 'the server is shutting down or starting up, or ended the session'],
  ['42501', 'the role lacks a privilege toolgate needs (grant it on the database and its schema)'],
  ['55000', 'the database does not accept connections now'],
];

/** The cause of a refused PostgreSQL connection, or null for any other SQLSTATE. */
function refusal(code: unknown): string | null {
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return null;
  return REFUSALS.find(([prefix]) => code.startsWith(prefix))?.[1] ?? null;
}

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

/** PostgreSQL refused or ended the connection: unavailable, naming the cause and its SQLSTATE. */
function storeRefused(code: string, cause: string): ToolgateError<'STORE_UNAVAILABLE'> {
  return new ToolgateError(
    'STORE_UNAVAILABLE',
    `the database cannot be used: ${cause} (SQLSTATE ${code})`,
    {},
  );
}

/** TLS certificate codes of Node's TLS layer: the server's certificate was not accepted. */
const CERTIFICATE = /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ALTNAME/;

/**
 * An error of opening a PostgreSQL connection (the pool's connect), always STORE_UNAVAILABLE with
 * its cause in toolgate's words: whatever stops the connection at its start is the deployment's
 * state or set-up (a server without TLS that the URL asks for, a certificate not accepted, a host
 * name that does not resolve now, a parameter of `options=` the server refuses, a database not
 * accepting connections, a role without the privilege to connect), never a bug (attack round 22,
 * Y4). The server's and the driver's own words stay out: they may name roles and hosts.
 */
export function connectionError(err: unknown): unknown {
  const translated = storeError(err);
  if (translated !== err) return translated;
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
    return storeRefused(code, 'the server refused the connection or one of its parameters');
  }
  if (text.includes('does not support SSL')) {
    return storeCause('the server does not accept TLS, which the URL asks for (sslmode)');
  }
  if (typeof code === 'string' && CERTIFICATE.test(code)) {
    return storeCause(`the server's TLS certificate was not accepted (${code})`);
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return storeCause('the database host name does not resolve now');
  }
  return storeCause('the connection could not be made');
}

function storeCause(cause: string): ToolgateError<'STORE_UNAVAILABLE'> {
  return new ToolgateError('STORE_UNAVAILABLE', `the database cannot be used: ${cause}`, {});
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
  const cause = refusal(code);
  if (cause !== null) return storeRefused(code as string, cause);
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
