/**
 * @module PostgreSQL's slot of a backup (records/store/database-copy.ts): `pg_dump` in its custom
 * format, and `pg_restore` into a new database; where the tool is not installed, the exact command
 * for the operator to run. The password travels in PGPASSWORD, never on a command line (a process's
 * arguments are readable by every user of the host); a URL holding a secret libpq has no variable
 * for (`sslpassword`) is refused (db-url.ts).
 */
import { execFile } from 'node:child_process';
import { closeSync, openSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, sql } from 'kysely';
import { ToolgateError } from '../../../core/index.js';
import { postgresUrl, refuseSecretsToolsCannotTake } from '../db-url.js';
import { storeError } from '../store-errors.js';
import { createPostgresDialect } from './dialect.js';

/** The dump's name inside a backup folder. */
export const POSTGRES_BACKUP_FILE = 'postgres.dump';

/** What a client tool is given: the URL without any secret, and the password for PGPASSWORD. */
function credentials(url: string): { dbname: string; env: NodeJS.ProcessEnv } {
  refuseSecretsToolsCannotTake(url);
  const { withoutSecrets, password } = postgresUrl(url);
  return { dbname: withoutSecrets, env: password ? { PGPASSWORD: password } : {} };
}

/** Runs a PostgreSQL client tool; null when it is not installed (ENOENT). */
function run(tool: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<null | void> {
  return new Promise((resolve, reject) => {
    execFile(
      tool,
      args,
      { env: { ...process.env, ...env }, maxBuffer: 4 * 1024 * 1024 },
      (err, _stdout, stderr) => {
        if (!err) return resolve();
        if ((err as { code?: unknown }).code === 'ENOENT') return resolve(null);
        const first = String(stderr).trim().split('\n')[0] ?? '';
        reject(
          new ToolgateError('STORE_UNAVAILABLE', `${tool} failed: ${first || err.message}`, {}),
        );
      },
    );
  });
}

const DUMP_ARGS = ['--format=custom', '--no-owner', '--no-privileges'];
const RESTORE_ARGS = ['--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction'];

/** How a person runs `tool` by hand: every secret left out (the password goes in PGPASSWORD). */
function commandLine(tool: string, args: readonly string[], dbname: string): string {
  return [tool, ...args, `--dbname='${dbname}'`].join(' ');
}

/** Dumps the database `url` names into `folder`, or says how when pg_dump is not installed. */
export async function saveDump(
  url: string,
  folder: string,
): Promise<{ file: string; method: string } | { file: null; command: string }> {
  const file = join(folder, POSTGRES_BACKUP_FILE);
  const args = [...DUMP_ARGS, `--file=${file}`];
  const { dbname, env } = credentials(url);
  // Created 0600 first: pg_dump keeps the mode of the file it truncates.
  closeSync(openSync(file, 'wx', 0o600));
  const done = await run('pg_dump', [...args, `--dbname=${dbname}`], env);
  if (done === null) {
    unlinkSync(file);
    return { file: null, command: commandLine('pg_dump', args, dbname) };
  }
  return { file: POSTGRES_BACKUP_FILE, method: `pg_dump ${DUMP_ARGS.join(' ')}` };
}

/** Restores a dump into the database `url` names, which must hold no table yet. */
export async function restoreDump(
  url: string,
  file: string,
): Promise<
  { restored: true; location: string } | { restored: false; location: string; command: string }
> {
  const { dbname, env } = credentials(url);
  const location = postgresUrl(url).location;
  const db = new Kysely<unknown>({ dialect: createPostgresDialect(url) });
  let tables: number;
  try {
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from information_schema.tables
      where table_schema = current_schema()`.execute(db);
    tables = rows[0]?.n ?? 0;
  } catch (err) {
    const why = storeError(err);
    throw new ToolgateError(
      'STORE_UNAVAILABLE',
      `cannot reach ${location}${why instanceof ToolgateError ? `: ${why.message}` : ''}`,
      {},
    );
  } finally {
    await db.destroy();
  }
  if (tables > 0) {
    throw new ToolgateError(
      'INPUT_INVALID',
      `${location} already holds tables: restore into a new, empty database (createdb)`,
      { problems: [] },
    );
  }
  const args = [...RESTORE_ARGS, file];
  const done = await run('pg_restore', [`--dbname=${dbname}`, ...args], env);
  if (done === null) {
    return { restored: false, location, command: commandLine('pg_restore', args, dbname) };
  }
  return { restored: true, location };
}
