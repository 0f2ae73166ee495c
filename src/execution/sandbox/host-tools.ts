/** @module Finds the host programs the drivers need (bwrap, runsc, prlimit, socat) on PATH. */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Absolute path of an executable, or null; never consults anything but PATH and system dirs. */
export function findExecutable(name: string): string | null {
  const dirs = `${process.env.PATH ?? ''}${delimiter}${SYSTEM_PATH}`.split(delimiter);
  for (const dir of dirs) {
    if (!dir.startsWith('/')) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // next
    }
  }
  return null;
}

/** When toolgate runs as root, sandboxes run as this unprivileged host user instead. */
export const NOBODY = 65534;

export function runningAsRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}
