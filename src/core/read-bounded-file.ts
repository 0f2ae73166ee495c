/**
 * @module Reading a file an operator named (a password, token, key or configuration file), or
 * stdin, without hanging and without reading without end: only a regular file is opened, and at
 * most a stated number of bytes is read. A FIFO would block the open or the read until someone
 * writes; /dev/zero or /dev/urandom never end.
 */
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readSync,
  realpathSync,
  type Stats,
  statfsSync,
  statSync,
} from 'node:fs';
import { ToolgateError } from './errors.js';

/** Passwords, tokens, secret values, keys and small configuration files. */
export const MAX_SECRET_FILE_BYTES = 1024 * 1024;

const CHUNK = 64 * 1024;

interface ReadOptions {
  /** How the operator named the file (`--password-file`, `-f`, `TOOLGATE_OAUTH_CONFIG`). */
  readonly option: string;
  readonly maxBytes: number;
  /** `-` means stdin (where the option documents it). */
  readonly stdin?: boolean;
  /** The error for a file that is missing or cannot be read; default INPUT_INVALID. */
  readonly unreadable?: (message: string) => Error;
}

function refuse(option: string, path: string, why: string): never {
  throw new ToolgateError('INPUT_INVALID', `cannot read ${option} ${path}: ${why}`, {
    problems: [],
  });
}

/** What a path is when it is not a regular file, in an operator's words; null for a file. */
export function notRegularFile(stats: Stats): string | null {
  if (stats.isFile()) return null;
  if (stats.isDirectory()) return 'is a directory';
  if (stats.isFIFO()) return 'is a FIFO (named pipe)';
  if (stats.isSocket()) return 'is a socket';
  if (stats.isCharacterDevice()) return 'is a character device';
  if (stats.isBlockDevice()) return 'is a block device';
  return 'is not a regular file';
}

/** proc, sysfs, debugfs, securityfs, cgroup, cgroup2, tracefs: their files are not an operator's. */
const PSEUDO_FS = new Set([
  0x9fa0, 0x62656572, 0x64626720, 0x73636673, 0x27e0eb, 0x63677270, 0x74726163,
]);
const PSEUDO_PREFIX = /^\/(proc|sys)(\/|$)/;

/**
 * Why a path that stats as a regular file is still not one an operator wrote: it lives on a
 * pseudo filesystem (`/proc/self/environ` is a "regular file" of size 0 that reads the process's
 * environment). Null for a file on a real filesystem.
 */
function onPseudoFilesystem(path: string): string | null {
  try {
    const real = realpathSync(path);
    if (PSEUDO_PREFIX.test(real) || PSEUDO_FS.has(Number(statfsSync(real).type)))
      return 'is on a pseudo filesystem (/proc, /sys), not a file of yours';
  } catch {
    // Unreadable here is refused by the read that follows, with its own reason.
  }
  return null;
}

/**
 * Refuses, as INPUT_INVALID naming `option`, a path that is not a regular file on a real
 * filesystem: checked before a caller looks at the file's mode, so that a FIFO or device is
 * refused for what it is (not told to `chmod 600`). Returns the file's stats; a missing file is
 * refused with the system's reason.
 */
export function regularFileStats(path: string, option: string): Stats {
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch (err) {
    throw new ToolgateError('INPUT_INVALID', `cannot read ${option} ${path}: ${errnoWords(err)}`, {
      problems: [],
    });
  }
  const what = notRegularFile(stats) ?? onPseudoFilesystem(path);
  if (what !== null)
    refuse(option, path, what.startsWith('is on') ? what : `${what}, not a regular file`);
  return stats;
}

const ERRNO_WORDS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'not a directory',
  ELOOP: 'too many symbolic links',
  ENXIO: 'no such device or address',
};

function errnoWords(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? (ERRNO_WORDS[code] ?? code) : String(err);
}

/**
 * The text of `path` (`'-'`: stdin, where the option allows it), refused as INPUT_INVALID naming
 * `option` when the path is not a regular file, cannot be read, or holds more than `maxBytes`.
 * The check is made before opening (stat) and again on the opened descriptor (fstat, opened
 * O_NONBLOCK so that a FIFO swapped in between does not block the open). Never blocks on a FIFO
 * or device; never reads more than `maxBytes + 1` bytes.
 */
export function readBoundedFile(path: string, options: ReadOptions): string {
  const { option, maxBytes } = options;
  const unreadable: (err: unknown) => never = (err) => {
    const message = `cannot read ${option} ${path}: ${errnoWords(err)}`;
    throw (
      options.unreadable?.(message) ?? new ToolgateError('INPUT_INVALID', message, { problems: [] })
    );
  };
  const fromStdin = path === '-' && options.stdin === true;
  let fd: number;
  if (fromStdin) {
    fd = 0;
  } else {
    let before: Stats;
    try {
      before = statSync(path);
    } catch (err) {
      unreadable(err);
    }
    const what = notRegularFile(before);
    if (what !== null) refuse(option, path, `${what}, not a regular file`);
    const pseudo = onPseudoFilesystem(path);
    if (pseudo !== null) refuse(option, path, pseudo);
    try {
      fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    } catch (err) {
      unreadable(err);
    }
  }
  try {
    if (!fromStdin) {
      const what = notRegularFile(fstatSync(fd));
      if (what !== null) refuse(option, path, `${what}, not a regular file`);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buffer = Buffer.allocUnsafe(Math.min(CHUNK, maxBytes + 1 - total));
      let n: number;
      try {
        n = readSync(fd, buffer, 0, buffer.length, null);
      } catch (err) {
        // stdin may be a non-blocking pipe: wait for its writer a moment, as readFileSync(0) cannot.
        if (fromStdin && (err as { code?: unknown }).code === 'EAGAIN') {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
          continue;
        }
        unreadable(err);
      }
      if (n === 0) break;
      chunks.push(buffer.subarray(0, n));
      total += n;
      if (total > maxBytes) {
        refuse(option, path, `over the limit of ${maxBytes} bytes`);
      }
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } finally {
    if (!fromStdin) closeSync(fd);
  }
}
