/**
 * @module A database URL (`--db`, TOOLGATE_DB) taken apart: which backend, what to open, and how it
 * may be shown. A PostgreSQL URL carries secrets in two places, the userinfo's password and libpq's
 * secret parameters in its query (`?password=`, `?sslpassword=`); this is the one place that knows
 * them. Whatever prints or stores a URL shows `location` (every secret `***`); whatever hands one to
 * a PostgreSQL client tool gives it `withoutSecrets` and the password apart, in PGPASSWORD
 * (postgres/backup.ts), never on a command line another user of the host can read.
 */
import { resolve } from 'node:path';
import { ToolgateError } from '../../core/index.js';
import type { Dialect } from './migration-sql.js';

/**
 * libpq's connection parameters whose value is a secret (PostgreSQL's "Parameter Key Words"):
 * the password, the client key's passphrase, an OAuth client secret (PostgreSQL 18). A file's path
 * (`passfile`, `sslkey`) is not one. Compared without case: a spelling libpq refuses is still hidden.
 */
const SECRET_PARAMETERS: ReadonlySet<string> = new Set([
  'password',
  'sslpassword',
  'oauth_client_secret',
]);

export interface PostgresUrl {
  /** Every secret replaced by `***`: what is printed, logged and kept in a backup's manifest. */
  readonly location: string;
  /** Every secret left out: what a PostgreSQL client tool is given, and a person shown to run. */
  readonly withoutSecrets: string;
  /** The password the driver signs in with (node-postgres: `?password=`, else the userinfo's). */
  readonly password: string;
  /** The secrets the URL holds, by parameter name (`password` for the userinfo's too). */
  readonly secrets: readonly string[];
  /** Those other than the password: no libpq variable carries them. */
  readonly otherSecrets: readonly string[];
}

/** A query's `name=value` pairs as written, each with its name decoded and lower-cased. */
function queryPairs(search: string): { raw: string; name: string; value: string }[] {
  return search
    .replace(/^\?/, '')
    .split('&')
    .filter((raw) => raw !== '')
    .map((raw) => {
      const eq = raw.indexOf('=');
      const rawName = eq === -1 ? raw : raw.slice(0, eq);
      let name = rawName;
      try {
        name = decodeURIComponent(rawName);
      } catch {
        // Not valid percent-encoding: compared as written.
      }
      return { raw, name: name.toLowerCase(), value: eq === -1 ? '' : raw.slice(eq + 1) };
    });
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** A `postgres://` or `postgresql://` URL apart: shown, without its secrets, its password. */
export function postgresUrl(url: string): PostgresUrl {
  const parsed = new URL(url);
  const pairs = queryPairs(parsed.search);
  const secret = (p: { name: string }) => SECRET_PARAMETERS.has(p.name);
  // As node-postgres reads it (pg-connection-string): the last `password` in the query, when not
  // empty, else the userinfo's; the one the gateway signed in with.
  const fromQuery = new URLSearchParams(parsed.search).getAll('password').at(-1) ?? '';
  const password = fromQuery !== '' ? fromQuery : decoded(parsed.password);
  const secrets = [
    ...new Set([
      ...(parsed.password !== '' ? ['password'] : []),
      ...pairs.filter(secret).map((p) => p.name),
    ]),
  ];
  const otherSecrets = secrets.filter((name) => name !== 'password');

  const shown = new URL(parsed);
  if (shown.password !== '') shown.password = '***';
  shown.search = pairs.map((p) => (secret(p) ? `${p.raw.split('=')[0]}=***` : p.raw)).join('&');
  const bare = new URL(parsed);
  bare.password = '';
  bare.search = pairs
    .filter((p) => !secret(p))
    .map((p) => p.raw)
    .join('&');
  return {
    location: shown.toString(),
    withoutSecrets: bare.toString(),
    password,
    secrets,
    otherSecrets,
  };
}

/** The secrets a database URL holds, by parameter name; none for SQLite or what is no URL. */
export function dbUrlSecrets(url: string): readonly string[] {
  if (!url.startsWith('postgres://') && !url.startsWith('postgresql://')) return [];
  try {
    return postgresUrl(url).secrets;
  } catch {
    return [];
  }
}

/**
 * Refuses (INPUT_INVALID, before anything is written) a URL holding a secret that pg_dump and
 * pg_restore could only be given on their command line: libpq reads the password from PGPASSWORD,
 * and has no variable for `sslpassword` (nor for `oauth_client_secret`).
 */
export function refuseSecretsToolsCannotTake(url: string): void {
  const otherSecrets = dbUrlSecrets(url).filter((name) => name !== 'password');
  if (otherSecrets.length === 0) return;
  throw new ToolgateError(
    'INPUT_INVALID',
    `the database URL holds ${otherSecrets.join(', ')}, which pg_dump and pg_restore could take only on their command line, where every user of the host can read it: use a client key without a passphrase (sslkey, mode 0600) for backup and restore`,
    { problems: [] },
  );
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
    let location: string;
    try {
      location = postgresUrl(url).location;
    } catch {
      // The WHATWG parser's error carries the input: never the text of a URL that may hold a password.
      throw new TypeError('the database URL is not a valid postgres:// URL');
    }
    return { dialect: 'postgres', target: url, location };
  }
  // Only a scheme's name is repeated: text without one may be a password given by mistake.
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]{0,19}:/.exec(url)?.[0] ?? '';
  throw new TypeError(
    `unsupported database URL${scheme ? ` "${scheme}…"` : ''}: use sqlite:PATH or postgres://…`,
  );
}

/**
 * A database URL as it may be shown (parseDbUrl's `location`), for text that names one without
 * opening it: a backup's manifest written by an older version, an error about a database.
 */
export function dbLocation(url: string): string {
  try {
    return parseDbUrl(url).location;
  } catch {
    return '(not a database URL)';
  }
}
