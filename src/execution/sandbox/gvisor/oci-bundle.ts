/**
 * @module A minimal OCI bundle for `runsc run`: an empty read-only root with mount points only,
 * system directories bound read-only, a size-capped noexec tmpfs scratch. `runsc do` is not used:
 * it shows the sandbox the whole host filesystem (an overlay of /), data dir and keys included.
 */
import { lstatSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { SandboxLimits } from '../../../domain/catalog/index.js';
import { dataLimitBytes } from '../rlimits.js';
import { EGRESS_SOCKET_PATH, type ReadOnlyBind } from '../run-spec.js';
import { systemRoot } from '../sandbox-root.js';

const MIB = 1024 * 1024;

interface Mount {
  destination: string;
  type: string;
  source: string;
  options?: string[];
}

export interface BundlePlan {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly limits: SandboxLimits;
  readonly binds: readonly ReadOnlyBind[];
  readonly writableBinds?: readonly ReadOnlyBind[];
  readonly egressSocket?: string;
}

/** Creates a mount point (file or directory like its source) inside the bundle's rootfs. */
async function mountPoint(rootfs: string, target: string, source: string): Promise<void> {
  const path = join(rootfs, target);
  let isDir = true;
  try {
    isDir = lstatSync(source).isDirectory();
  } catch {
    // An absent source fails at mount time with runsc's own message.
  }
  if (isDir) await mkdir(path, { recursive: true });
  else {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, '', { flag: 'a' });
  }
}

/** Writes rootfs/ and config.json into `dir`. */
export async function writeBundle(dir: string, plan: BundlePlan): Promise<void> {
  const rootfs = join(dir, 'rootfs');
  await mkdir(rootfs);
  // The scratch and kernel filesystems first: a tool file bound under /tmp must land on top.
  for (const d of ['tmp', 'proc', 'dev']) await mkdir(join(rootfs, d));
  const mounts: Mount[] = [
    { destination: '/proc', type: 'proc', source: 'proc' },
    {
      destination: '/dev',
      type: 'tmpfs',
      source: 'tmpfs',
      options: ['nosuid', 'noexec', 'mode=755'],
    },
    {
      destination: '/tmp',
      type: 'tmpfs',
      source: 'tmpfs',
      options: ['nosuid', 'noexec', 'nodev', `size=${plan.limits.scratch_mb * MIB}`, 'mode=1777'],
    },
  ];
  const root = systemRoot();
  for (const { path, target } of root.symlinks) await symlink(target, join(rootfs, path));
  for (const d of root.dirs) {
    await mkdir(join(rootfs, d));
    mounts.push({
      destination: d,
      type: 'bind',
      source: d,
      options: ['rbind', 'ro', 'nosuid', 'nodev'],
    });
  }
  const binds: ReadOnlyBind[] = [...root.etc.map((e) => ({ source: e, target: e })), ...plan.binds];
  for (const b of binds) {
    await mountPoint(rootfs, b.target, b.source);
    mounts.push({
      destination: b.target,
      type: 'bind',
      source: b.source,
      options: ['rbind', 'ro', 'nosuid', 'nodev'],
    });
  }
  for (const b of plan.writableBinds ?? []) {
    await mountPoint(rootfs, b.target, b.source);
    mounts.push({
      destination: b.target,
      type: 'bind',
      source: b.source,
      options: ['rbind', 'rw', 'nosuid', 'nodev'],
    });
  }
  if (plan.egressSocket !== undefined) {
    await mountPoint(rootfs, EGRESS_SOCKET_PATH, plan.egressSocket);
    mounts.push({
      destination: EGRESS_SOCKET_PATH,
      type: 'bind',
      source: plan.egressSocket,
      options: ['bind'],
    });
  }
  const cpu = Math.max(1, Math.ceil(plan.limits.cpu_ms / 1000));
  const rlimit = (type: string, soft: number, hard = soft) => ({ type, soft, hard });
  const data = dataLimitBytes(plan.limits);
  const config = {
    ociVersion: '1.0.0',
    process: {
      terminal: false,
      user: { uid: 65534, gid: 65534 },
      args: [...plan.argv],
      env: Object.entries(plan.env).map(([k, v]) => `${k}=${v}`),
      cwd: '/tmp',
      capabilities: { bounding: [], effective: [], inheritable: [], permitted: [], ambient: [] },
      noNewPrivileges: true,
      rlimits: [
        rlimit('RLIMIT_CPU', cpu, cpu + 1),
        ...(data !== null ? [rlimit('RLIMIT_DATA', data)] : []),
        rlimit('RLIMIT_NPROC', plan.limits.processes),
        rlimit('RLIMIT_NOFILE', plan.limits.open_files),
        rlimit('RLIMIT_FSIZE', plan.limits.scratch_mb * MIB),
        rlimit('RLIMIT_CORE', 0),
      ],
    },
    root: { path: 'rootfs', readonly: true },
    hostname: 'sandbox',
    mounts,
    linux: {
      namespaces: [
        { type: 'pid' },
        { type: 'network' },
        { type: 'ipc' },
        { type: 'uts' },
        { type: 'mount' },
      ],
    },
  };
  await writeFile(join(dir, 'config.json'), JSON.stringify(config));
}
