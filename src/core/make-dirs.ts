/**
 * @module Creating the folders of a path an operator gave, without hanging: Node's recursive
 * mkdir loops forever under a pseudo filesystem such as /proc, so the nearest existing ancestor is
 * found first (a bounded walk) and must be a writable directory on a real filesystem.
 */
import { accessSync, constants, mkdirSync, realpathSync, statfsSync, statSync } from 'node:fs';
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
