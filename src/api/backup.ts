/**
 * @module Backups and restore (docs/operations.md, "Backups and restore"), services that need no
 * open gateway: `backup` writes the database (an online copy, or a PostgreSQL dump) and the data
 * folder's key files into a new folder with a manifest of their SHA-256 hashes; `restore` checks
 * every hash and the schema, then writes them into a new data folder and a new database. Neither
 * ever writes into a folder or database that holds anything.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import {
  MAX_SECRET_FILE_BYTES,
  makeDirs,
  narrowPrivateDir,
  type Problem,
  problem,
  regularFileStats,
  syncPath,
  ToolgateError,
} from '../core/index.js';
import { MASTER_KEY_FILE_NAME, type MasterKey } from '../domain/credentials/index.js';
import {
  DIALECTS,
  type Dialect,
  dbLocation,
  holdsDatabase,
  knownMigrations,
  openStore,
  type RestoredDatabase,
  refuseNewerSchema,
  refuseSecretsToolsCannotTake,
  restoreDatabase,
} from '../records/store/index.js';
import {
  type Authenticity,
  authenticateManifest,
  checkAuthenticity,
  type ManifestAuthentication,
} from './backup-authentication.js';

export const BACKUP_FORMAT = 'toolgate-backup/1';
const MANIFEST = 'manifest.json';
/** Key files sit in the backup under `data/`, by their name in the data folder. */
const KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const DB_FILE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export interface BackupFile {
  /** Where the file is kept in the backup (`toolgate.db`, `data/master.key`). */
  readonly path: string;
  readonly sha256: string;
  readonly bytes: number;
}

export interface BackupManifest {
  readonly format: typeof BACKUP_FORMAT;
  readonly toolgate_version: string;
  readonly created_at: string;
  /** Where the database was, its password left out. */
  readonly location: string;
  readonly dialect: Dialect;
  /** The migrations the database held: its schema version. */
  readonly migrations: readonly string[];
  /** The database's file in the backup; null when a command to write it was printed instead. */
  readonly database: BackupFile | null;
  /** `pg_dump` was not installed: the exact command that writes the dump into this folder. */
  readonly database_command?: string;
  readonly files: readonly BackupFile[];
  /** An HMAC of the rest under the master key from TOOLGATE_MASTER_KEY (backup-authentication.ts). */
  readonly authentication?: ManifestAuthentication;
}

/** A key file of the data folder to keep: its name there, and where it is read from now. */
export interface KeyFile {
  readonly name: string;
  readonly path: string;
}

export interface BackupOptions {
  readonly db: string;
  readonly keys: readonly KeyFile[];
  /** The data folder the keys are read from: made private (0700) on use. */
  readonly dataDir?: string;
  readonly version: string;
  readonly now?: () => Date;
  /**
   * The master key from TOOLGATE_MASTER_KEY, which no file of the backup holds: the manifest is
   * authenticated under it. Null or absent when the master key is a file the backup keeps.
   */
  readonly masterKey?: MasterKey | null;
  /**
   * Without `masterKey`: makes the master key file if the data folder has none yet, once every
   * check passed, so that the backup holds its key (restore refuses a backup that holds neither
   * its key nor a MAC under it).
   */
  readonly makeMasterKey?: () => unknown;
}

/** The file's SHA-256 and size, read in chunks: a database may be far larger than memory. */
function hashFile(folder: string, path: string): BackupFile {
  const hash = createHash('sha256');
  const chunk = Buffer.alloc(1024 * 1024);
  const fd = openSync(join(folder, path), constants.O_RDONLY | constants.O_NOFOLLOW);
  let bytes = 0;
  try {
    for (let n = readSync(fd, chunk); n > 0; n = readSync(fd, chunk)) {
      hash.update(chunk.subarray(0, n));
      bytes += n;
    }
  } finally {
    closeSync(fd);
  }
  return { path, sha256: hash.digest('hex'), bytes };
}

/** Writes a new file 0600 and flushes it: what a backup holds must survive a power cut. */
function writePrivate(path: string, data: Buffer | string): void {
  writeFileSync(path, data, { mode: 0o600, flag: 'wx' });
  syncPath(path);
}

function refused(message: string): ToolgateError<'INPUT_INVALID'> {
  return new ToolgateError('INPUT_INVALID', message, { problems: [] });
}

/** Creates `folder` 0700, or takes an existing empty one; refuses one that holds anything. */
/** Makes `folder` ready to write into; true when it did not exist and was made here. */
function newFolder(folder: string, what: string): boolean {
  const made = !existsSync(folder);
  if (!made) {
    if (!statSync(folder).isDirectory()) throw refused(`${what} ${folder} is not a folder`);
    if (readdirSync(folder).length > 0) {
      throw refused(`${what} ${folder} is not empty: name a new or empty folder`);
    }
  } else {
    makeDirs(dirname(folder), 0o700);
    mkdirSync(folder, { mode: 0o700 });
  }
  // An existing folder is narrowed to 0700, or refused when another user owns it: whoever can
  // write into it could replace the keys between the backup and the restore.
  narrowPrivateDir(folder, what);
  return made;
}

/**
 * Backs up into `out`, a new or empty folder (0700): the database while a gateway may run on it,
 * then each key file that exists (0600), then the manifest. On a failure nothing is left in `out`.
 */
export async function backup(out: string, options: BackupOptions): Promise<BackupManifest> {
  if (!holdsDatabase(options.db)) {
    throw refused(
      `--db ${dbLocation(options.db)} holds no database: name the one the gateway uses`,
    );
  }
  refuseSecretsToolsCannotTake(options.db);
  if (options.dataDir !== undefined) narrowPrivateDir(options.dataDir);
  const made = newFolder(out, 'backup folder');
  try {
    const store = await openStore(options.db);
    let saved: Awaited<ReturnType<typeof store.saveCopy>>;
    try {
      saved = await store.saveCopy(out);
    } finally {
      await store.close();
    }
    if (!options.masterKey) options.makeMasterKey?.();
    const files: BackupFile[] = [];
    for (const key of options.keys) {
      if (!existsSync(key.path)) continue;
      // The key the manifest is authenticated under stays out of it; a master key file left in
      // the data folder is not the one in use while TOOLGATE_MASTER_KEY is set.
      if (options.masterKey && key.name === MASTER_KEY_FILE_NAME) continue;
      if (regularFileStats(key.path, key.name).size > MAX_SECRET_FILE_BYTES) {
        throw refused(`${key.path} is larger than a key file can be`);
      }
      if (files.length === 0) mkdirSync(join(out, 'data'), { mode: 0o700 });
      writePrivate(join(out, 'data', key.name), readFileSync(key.path));
      files.push(hashFile(out, `data/${key.name}`));
    }
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      toolgate_version: options.version,
      created_at: (options.now?.() ?? new Date()).toISOString(),
      location: store.location,
      dialect: saved.dialect,
      migrations: [...store.migrations],
      database: saved.file === null ? null : hashFile(out, saved.file),
      ...(saved.file === null ? { database_command: saved.command } : {}),
      files,
    };
    const written: BackupManifest = options.masterKey
      ? { ...manifest, authentication: authenticateManifest(options.masterKey, manifest) }
      : manifest;
    writePrivate(join(out, MANIFEST), `${JSON.stringify(written, null, 2)}\n`);
    syncPath(out);
    return written;
  } catch (err) {
    // A refused backup leaves nothing: the folder it made is removed, one given empty emptied.
    if (made) rmSync(out, { recursive: true, force: true });
    else emptyFolder(out);
    throw err;
  }
}

function emptyFolder(folder: string): void {
  for (const entry of readdirSync(folder)) {
    rmSync(join(folder, entry), { recursive: true, force: true });
  }
}

/** The manifest of the backup in `from`, its shape checked; INPUT_INVALID otherwise. */
export function readManifest(from: string): BackupManifest {
  const path = join(from, MANIFEST);
  let data: unknown;
  try {
    if (regularFileStats(path, MANIFEST).size > MAX_SECRET_FILE_BYTES) throw new Error('too large');
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    throw invalidBackup([problem('/manifest.json', 'missing or not JSON', 'backup.manifest')]);
  }
  const m = data as Partial<BackupManifest> | null;
  const problems: Problem[] = [];
  const bad = (pointer: string, message: string) =>
    problems.push(problem(pointer, message, 'backup.manifest'));
  if (m === null || typeof m !== 'object') {
    throw invalidBackup([problem('/manifest.json', 'not an object', 'backup.manifest')]);
  }
  if (m.format !== BACKUP_FORMAT) bad('/format', `is not ${BACKUP_FORMAT}`);
  if (!DIALECTS.some((d) => d === m.dialect)) bad('/dialect', 'is not a database kind');
  if (!Array.isArray(m.migrations) || !m.migrations.every((n) => typeof n === 'string')) {
    bad('/migrations', 'is not a list of migration names');
  }
  if (m.database !== null && !isFile(m.database, DB_FILE)) bad('/database', 'is not a file entry');
  if (!Array.isArray(m.files) || !m.files.every((f) => isFile(f, KEY_NAME, 'data/'))) {
    bad('/files', 'is not a list of data/ file entries');
  }
  if (problems.length > 0) throw invalidBackup(problems);
  // Shown again as the backup's own: a manifest an older version wrote may hold the password.
  return { ...(m as BackupManifest), location: dbLocation(String(m.location ?? '')) };
}

/** A file entry whose path is one plain name (under `prefix`): nothing can point outside. */
function isFile(f: unknown, name: RegExp, prefix = ''): f is BackupFile {
  const e = f as Partial<BackupFile> | null;
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof e.path === 'string' &&
    e.path.startsWith(prefix) &&
    name.test(e.path.slice(prefix.length)) &&
    typeof e.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(e.sha256) &&
    Number.isSafeInteger(e.bytes)
  );
}

/** A folder itself, not a symbolic link to one. */
function isRealFolder(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** A backup file's bytes, never through a symbolic link (checked by checkFiles, opened so). */
function readBackupFile(path: string): Buffer {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** INPUT_INVALID with a problem per file (rules `backup.*`): the backup is not the one written. */
function invalidBackup(problems: Problem[]): ToolgateError<'INPUT_INVALID'> {
  const first = problems[0];
  return new ToolgateError(
    'INPUT_INVALID',
    `the backup cannot be restored: ${first ? `${first.pointer.slice(1)} ${first.message}` : 'invalid'}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''}; nothing was restored`,
    { problems },
  );
}

/** Every file the manifest lists is there with its hash; INPUT_INVALID naming each one that is not. */
function checkFiles(from: string, manifest: BackupManifest): void {
  const problems: Problem[] = [];
  if (manifest.files.length > 0 && !isRealFolder(join(from, 'data'))) {
    throw invalidBackup([problem('/data', 'is not a folder', 'backup.file_missing')]);
  }
  for (const f of [...(manifest.database ? [manifest.database] : []), ...manifest.files]) {
    const path = join(from, f.path);
    let actual: BackupFile;
    try {
      // A symbolic link (to the live data folder, to /etc/hostname) is not a file of the backup.
      if (!lstatSync(path).isFile()) {
        problems.push(problem(`/${f.path}`, 'is not a regular file', 'backup.file_missing'));
        continue;
      }
      actual = hashFile(from, f.path);
    } catch {
      problems.push(problem(`/${f.path}`, 'is missing or unreadable', 'backup.file_missing'));
      continue;
    }
    if (actual.sha256 !== f.sha256 || actual.bytes !== f.bytes) {
      problems.push(
        problem(`/${f.path}`, 'does not match its SHA-256 in the manifest', 'backup.hash_mismatch'),
      );
    }
  }
  if (problems.length > 0) throw invalidBackup(problems);
}

export interface RestoreOptions {
  readonly db: string;
  readonly dataDir: string;
  /**
   * The master key at restore, from TOOLGATE_MASTER_KEY or TOOLGATE_MASTER_KEY_FILE
   * (restoreMasterKey), if set: an authenticated backup is checked with it.
   */
  readonly masterKey?: MasterKey | null;
  /** The key came from TOOLGATE_MASTER_KEY (default: whenever one is given). */
  readonly masterKeyInline?: boolean;
}

export interface RestoreResult {
  readonly manifest: BackupManifest;
  readonly authenticity: Authenticity;
  readonly database: RestoredDatabase | { readonly restored: false; readonly command: string };
  readonly files: readonly string[];
}

/**
 * Restores the backup in `from` into a new data folder and a new database. First every check —
 * the manifest, every file's hash, a schema this version knows (STORE_TOO_NEW otherwise), an
 * empty data folder — then the key files (0600, the folder 0700), then the database.
 */
export async function restore(from: string, options: RestoreOptions): Promise<RestoreResult> {
  refuseSecretsToolsCannotTake(options.db);
  const manifest = readManifest(from);
  const checked = checkAuthenticity(
    manifest,
    options.masterKey ?? null,
    manifest.files.some((f) => f.path === `data/${MASTER_KEY_FILE_NAME}`),
    options.masterKeyInline ?? Boolean(options.masterKey),
  );
  // A PostgreSQL backup finished by hand holds a dump no hash or MAC covers (attack round 22, Y10).
  const authenticity: Authenticity =
    manifest.database === null
      ? {
          ...checked,
          note: `${checked.note}; the database dump is not part of it: one made by hand with the printed pg_dump command is covered by no hash or MAC, so pg_restore only a dump you made yourself`,
        }
      : checked;
  checkFiles(from, manifest);
  refuseNewerSchema(manifest.migrations, await knownMigrations(manifest.dialect));
  newFolder(options.dataDir, 'data folder');
  const files: string[] = [];
  try {
    for (const f of manifest.files) {
      const name = f.path.slice('data/'.length);
      writePrivate(join(options.dataDir, name), readBackupFile(join(from, f.path)));
      files.push(name);
    }
    syncPath(options.dataDir);
    const database = await restoreInto(from, options.db, manifest);
    return { manifest, authenticity, files, database };
  } catch (err) {
    // The data folder was empty: a refused or failed restore leaves it so.
    emptyFolder(options.dataDir);
    throw err;
  }
}

async function restoreInto(
  from: string,
  db: string,
  manifest: BackupManifest,
): Promise<RestoreResult['database']> {
  if (manifest.database === null) {
    // The dump was made by hand with the printed command: the manifest has no hash to check it by.
    return {
      restored: false,
      command: `the backup holds no dump: restore the one made with "${manifest.database_command ?? 'pg_dump'}" with pg_restore --no-owner --no-privileges --exit-on-error --single-transaction --dbname=…`,
    };
  }
  return restoreDatabase(db, join(from, manifest.database.path), manifest.dialect);
}
