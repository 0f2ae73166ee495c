/**
 * @module SQLite's slot of a backup (records/store/database-copy.ts): an online copy through
 * SQLite's backup API while a gateway writes, and its restore into a new database file.
 */
import {
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  openSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { makeDirs, syncPath, ToolgateError } from '../../../core/index.js';
import type { SqliteHandle } from './dialect.js';

/** The database's name inside a backup folder. */
export const SQLITE_BACKUP_FILE = 'toolgate.db';

/**
 * Copies the open database into `folder` (SQLite's online backup API). The copy is taken in one
 * step, so it is one read transaction: a consistent snapshot of the WAL database while a running
 * gateway goes on writing (in small steps, each write of another connection would restart it).
 * The file is created 0600 before SQLite writes into it.
 */
export async function saveFile(
  database: SqliteHandle,
  folder: string,
): Promise<{ file: string; method: string }> {
  const path = join(folder, SQLITE_BACKUP_FILE);
  closeSync(openSync(path, 'wx', 0o600));
  await database.backup(path, { progress: () => 0x7fffffff });
  syncPath(path);
  return { file: SQLITE_BACKUP_FILE, method: 'sqlite online backup' };
}

/** A database file that exists with content, or a write-ahead log beside it: not a new database. */
function holdsData(target: string): boolean {
  return [target, `${target}-wal`].some((f) => existsSync(f) && statSync(f).size > 0);
}

/** Copies a saved database to `target`, a new file (0600); refuses one that holds anything. */
export function restoreFile(file: string, target: string): void {
  if (holdsData(target)) {
    throw new ToolgateError(
      'INPUT_INVALID',
      `--db sqlite:${target} already holds a database: restore into a new one (or move it away first)`,
      { problems: [] },
    );
  }
  makeDirs(dirname(target), 0o700);
  for (const f of [target, `${target}-wal`, `${target}-shm`]) if (existsSync(f)) unlinkSync(f);
  copyFileSync(file, target, constants.COPYFILE_EXCL);
  // copyFile keeps the backup's mode (0600); the sync makes the restore durable.
  syncPath(target);
  syncPath(dirname(target));
}

/**
 * The migrations a restored database file holds, read from its own table (a backup's manifest
 * may not say them all); the file is opened read-only.
 */
export function migrationsIn(target: string): string[] {
  const db = new BetterSqlite3(target, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('select name from kysely_migration').all() as { name: string }[];
    return rows.map((r) => r.name).sort();
  } finally {
    db.close();
  }
}

/** Removes a restored database file that is refused, with its journal files. */
export function removeRestored(target: string): void {
  for (const f of [target, `${target}-wal`, `${target}-shm`]) if (existsSync(f)) unlinkSync(f);
}
