/**
 * @module Which migrations a database holds, and the refusal of a database a newer toolgate has
 * upgraded. Migrations are forward-only (docs/operations.md, "Upgrades and rollback"): an older
 * version never runs on a schema it does not know; it stops, changes nothing and says in one line
 * which migration it lacks (STORE_TOO_NEW), instead of Kysely's "corrupted migrations".
 */
import { type Kysely, sql } from 'kysely';
import { ToolgateError } from '../../core/index.js';
import type { Dialect } from './migration-sql.js';
import { migrationProvider } from './migrations/index.js';

/** Every migration this version knows, in the order they run (their names sort so). */
export async function knownMigrations(dialect: Dialect): Promise<string[]> {
  return Object.keys(await migrationProvider(dialect).getMigrations()).sort();
}

/** The migrations recorded in the database's migration table (Kysely's), by name. */
export async function appliedMigrations<DB>(db: Kysely<DB>): Promise<string[]> {
  const rows = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
  return rows.rows.map((r) => r.name).sort();
}

/**
 * Throws STORE_TOO_NEW when `applied` holds a migration `known` lacks; never returns otherwise
 * having changed anything. Also for a backup's manifest (restore refuses a newer schema alike).
 */
export function refuseNewerSchema(applied: readonly string[], known: readonly string[]): void {
  const unknown = applied.filter((name) => !known.includes(name));
  if (unknown.length === 0) return;
  const newestKnown = known[known.length - 1] ?? '';
  throw new ToolgateError(
    'STORE_TOO_NEW',
    `the database holds migration ${unknown.join(', ')}, which this toolgate does not know (its newest is ${newestKnown}): a newer toolgate upgraded it. Nothing was changed; run that newer version, or restore the backup taken before the upgrade (docs/operations.md, "Upgrades and rollback")`,
    { unknown, newestKnown },
  );
}

/**
 * What a failed migration run means: STORE_TOO_NEW when the database holds a migration this
 * version lacks (Kysely refuses before running anything), else the failure as the store reports it.
 */
export async function migrationFailure<DB>(
  db: Kysely<DB>,
  dialect: Dialect,
  error: unknown,
): Promise<unknown> {
  let applied: string[];
  try {
    applied = await appliedMigrations(db);
  } catch {
    return error;
  }
  try {
    refuseNewerSchema(applied, await knownMigrations(dialect));
  } catch (tooNew) {
    return tooNew;
  }
  return error;
}
