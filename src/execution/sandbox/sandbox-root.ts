/**
 * @module What of the host a sandbox's root is built from, for both the namespace (bubblewrap)
 * and gvisor (OCI bundle) drivers: the system directories and the few /etc entries a program
 * needs to load and run — nothing with secrets or host identity, never toolgate's own data.
 */
import { existsSync, lstatSync, readlinkSync } from 'node:fs';

/** Top-level system directories that may be bound (or are symlinks into /usr on merged-usr). */
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'] as const;

/** The /etc entries a program needs to load and run; nothing with secrets or host identity. */
const ETC_ENTRIES = [
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/alternatives',
  '/etc/localtime',
  '/etc/nsswitch.conf',
  '/etc/ssl/certs',
  '/etc/ca-certificates',
  '/etc/mime.types',
] as const;

export interface SystemRoot {
  /** Real system directories on this host, bound read-only at the same path. */
  readonly dirs: readonly string[];
  /** System paths that are symlinks here (merged /usr: /bin → usr/bin); recreated as such. */
  readonly symlinks: readonly { readonly path: string; readonly target: string }[];
  /** The /etc entries present on this host, bound read-only at the same path. */
  readonly etc: readonly string[];
}

let cached: SystemRoot | null = null;

/** Read from the host once per process. */
export function systemRoot(): SystemRoot {
  if (cached) return cached;
  const dirs: string[] = [];
  const symlinks: { path: string; target: string }[] = [];
  for (const path of SYSTEM_DIRS) {
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(path);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) symlinks.push({ path, target: readlinkSync(path) });
    else if (stat.isDirectory()) dirs.push(path);
  }
  cached = { dirs, symlinks, etc: ETC_ENTRIES.filter((e) => existsSync(e)) };
  return cached;
}
