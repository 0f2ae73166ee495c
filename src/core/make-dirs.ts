/**
 * @module Creating the folders of a path an operator gave, without hanging: Node's recursive
 * mkdir loops forever under a pseudo filesystem such as /proc, so the nearest existing ancestor is
 * found first (a bounded walk) and must be a writable directory on a real filesystem.
 */
import {
  accessSync,
  chmodSync,
  constants,
  existsSync,
  mkdirSync,
  realpathSync,
  statfsSync,
  statSync,
} from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ToolgateError } from './errors.js';

/** proc, sysfs, debugfs, securityfs, cgroup, cgroup2, tracefs. */
const PSEUDO_FS = new Set([
  0x9fa0, 0x62656572, 0x64626720, 0x73636673, 0x27e0eb, 0x63677270, 0x74726163,
]);
const PSEUDO_PREFIX = /^\/(proc|sys)(\/|$)/;
const MAX_DEPTH = 4096;

function refuse(path: string, why: string): never {
  throw new ToolgateError('INPUT_INVALID', `cannot create folder ${path}: ${why}`, {
    problems: [],
  });
}

/** `mkdir -p path`, refused with one INPUT_INVALID line when it cannot be made on a real disk. */
export function makeDirs(path: string, mode?: number): void {
  const target = resolve(path);
  let current = target;
  for (let depth = 0; ; depth++) {
    if (depth > MAX_DEPTH) refuse(path, 'too deep');
    let isDir: boolean;
    try {
      isDir = statSync(current).isDirectory();
    } catch (err) {
      if ((err as { code?: string }).code !== 'ENOENT') refuse(path, `cannot read ${current}`);
      const parent = dirname(current);
      if (parent === current) refuse(path, 'no existing ancestor');
      current = parent;
      continue;
    }
    if (!isDir) refuse(path, `${current} is not a directory`);
    if (current === target) return;
    let real: string;
    try {
      real = realpathSync(current);
      accessSync(real, constants.W_OK);
    } catch {
      refuse(path, `${current} is not writable`);
    }
    if (PSEUDO_PREFIX.test(real) || PSEUDO_FS.has(Number(statfsSync(real).type))) {
      refuse(path, `${current} is on a pseudo filesystem`);
    }
    break;
  }
  mkdirSync(target, { recursive: true, ...(mode !== undefined ? { mode } : {}) });
}

/** Our uid; null where there is none (Windows): there, nothing is narrowed or refused by owner. */
function ourUid(): number | null {
  return typeof process.getuid === 'function' ? process.getuid() : null;
}

/**
 * Why a key file (or key folder) another user could have written is refused: it belongs to
 * another user. Null when it is ours (or the platform has no uids).
 */
export function foreignOwner(stats: { uid: number }, path: string): string | null {
  const uid = ourUid();
  if (uid === null || stats.uid === uid) return null;
  return `${path} belongs to another user (uid ${stats.uid}), not to this one (uid ${uid}): chown it, or use a file of your own`;
}

/**
 * Makes an existing folder that holds toolgate's keys private (docs/configuration.md, "The data
 * folder"): one we own is narrowed to 0700; one owned by another user is refused, since its owner
 * (or, when group or others can write it, anyone) could replace the files in it. A missing folder
 * is left for makePrivateDirs to create.
 */
export function narrowPrivateDir(path: string, what = 'data folder'): void {
  const uid = ourUid();
  if (uid === null || !existsSync(path)) return;
  const stats = statSync(path);
  if (!stats.isDirectory()) {
    throw new ToolgateError('INPUT_INVALID', `${what} ${path} is not a folder`, { problems: [] });
  }
  if (stats.uid !== uid) {
    throw new ToolgateError(
      'INPUT_INVALID',
      `${what} ${path} belongs to another user (uid ${stats.uid}), who could replace its key files: use a folder of your own (uid ${uid})`,
      { problems: [] },
    );
  }
  if ((stats.mode & 0o777) === 0o700) return;
  try {
    chmodSync(path, 0o700);
  } catch {
    throw new ToolgateError('INPUT_INVALID', `${what} ${path} cannot be made private (chmod 700)`, {
      problems: [],
    });
  }
}

/** `mkdir -p path` for a folder of keys: created 0700, or an existing one narrowed (narrowPrivateDir). */
export function makePrivateDirs(path: string, what = 'data folder'): void {
  makeDirs(path, 0o700);
  narrowPrivateDir(path, what);
}
