/**
 * @module The database's part of a backup (docs/operations.md, "Backups and restore"): what a copy
 * saved into a backup folder is (`Store.saveCopy`) and what restoring it did (restore-database.ts).
 * Each dialect fills the slot `backup.ts` (sqlite/: SQLite's online backup API; postgres/: pg_dump
 * and pg_restore).
 */
import type { Dialect } from './migration-sql.js';

/**
 * The database in a backup folder: a file in it, or — when the tool to write one is missing
 * (pg_dump) — the exact command that writes it, for the operator to run.
 */
export type SavedDatabase =
  | { readonly dialect: Dialect; readonly file: string; readonly method: string }
  | { readonly dialect: Dialect; readonly file: null; readonly command: string };

/** What restoring did: the database was written, or the command that writes it is printed. */
export type RestoredDatabase =
  | { readonly restored: true; readonly location: string }
  | { readonly restored: false; readonly location: string; readonly command: string };
