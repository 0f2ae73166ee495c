/**
 * @module Restoring the database of a backup into a new database (docs/operations.md, "Backups and
 * restore"), through the dialect's slot `backup.ts`.
 */
import { ToolgateError } from '../../core/index.js';
import type { RestoredDatabase } from './database-copy.js';
import { parseDbUrl } from './db-url.js';
import type { Dialect } from './migration-sql.js';
import { restoreDump } from './postgres/backup.js';
import { knownMigrations, refuseNewerSchema } from './schema-version.js';
import { migrationsIn, removeRestored, restoreFile } from './sqlite/backup.js';

/**
 * Restores the saved database `file` (in the backup folder) into the database `url` names, which
 * must be new: a SQLite file that does not exist or is empty, a PostgreSQL database without
 * tables. Never writes into a database that holds anything (INPUT_INVALID).
 */
export async function restoreDatabase(
  url: string,
  file: string,
  saved: Dialect,
): Promise<RestoredDatabase> {
  const { dialect, target, location } = parseDbUrl(url);
  if (dialect !== saved) {
    throw new ToolgateError(
      'INPUT_INVALID',
      `the backup holds a ${saved} database and --db names a ${dialect} one: restore into the same kind`,
      { problems: [] },
    );
  }
  if (dialect === 'sqlite') {
    restoreFile(file, target);
    try {
      // The database's own migrations, not only the manifest's list: a newer schema is refused.
      refuseNewerSchema(migrationsIn(target), await knownMigrations('sqlite'));
    } catch (err) {
      removeRestored(target);
      throw err;
    }
    return { restored: true, location };
  }
  return restoreDump(target, file);
}
