/**
 * @module The bubblewrap command line of one run. The root is built from selected system
 * directories only — never `--ro-bind / /` — so the sandbox has no view of toolgate's data dir,
 * keys, database, /root, /home or /etc/shadow.
 */
import { EGRESS_SOCKET_PATH, type ReadOnlyBind } from '../run-spec.js';
import { systemRoot } from '../sandbox-root.js';
import { scratchLayout } from './scratch-pool.js';

export interface BwrapPlan {
  /**
   * A host scratch mount (see scratch-pool.ts): its `tmp` folder becomes /tmp and cwd, its `shm`
   * folder /dev/shm, one size cap for both. When absent a bwrap tmpfs is /tmp and there is no
   * /dev/shm.
   */
  readonly scratchHostDir?: string;
  readonly scratchBytes: number;
  readonly binds: readonly ReadOnlyBind[];
  readonly writableBinds?: readonly ReadOnlyBind[];
  readonly egressSocket?: string;
  readonly env: Readonly<Record<string, string>>;
}

/**
 * The device nodes of the sandbox's /dev, bound from the host: nothing else is there (no pts,
 * no kcore link), and /dev itself is part of the read-only root. bwrap's `--dev` is not used: it
 * mounts a writable, executable, unlimited tmpfs with a /dev/shm folder on it.
 */
const DEV_NODES = [
  '/dev/null',
  '/dev/zero',
  '/dev/full',
  '/dev/random',
  '/dev/urandom',
  '/dev/tty',
];
const DEV_LINKS = [
  ['/proc/self/fd', '/dev/fd'],
  ['/proc/self/fd/0', '/dev/stdin'],
  ['/proc/self/fd/1', '/dev/stdout'],
  ['/proc/self/fd/2', '/dev/stderr'],
] as const;

function devArgs(): string[] {
  const args: string[] = [];
  for (const node of DEV_NODES) args.push('--dev-bind', node, node);
  for (const [target, path] of DEV_LINKS) args.push('--symlink', target, path);
  return args;
}

/** The system part of the root, computed once per process (it depends only on the host). */
let systemArgs: string[] | null = null;

function systemRootArgs(): string[] {
  if (systemArgs) return systemArgs;
  const root = systemRoot();
  const args: string[] = [];
  // merged /usr: /bin → usr/bin stays a symlink inside the sandbox too.
  for (const { path, target } of root.symlinks) args.push('--symlink', target, path);
  for (const dir of root.dirs) args.push('--ro-bind', dir, dir);
  args.push('--dir', '/etc');
  for (const entry of root.etc) args.push('--ro-bind', entry, entry);
  systemArgs = args;
  return args;
}

export function bwrapArgs(plan: BwrapPlan, argv: readonly string[]): string[] {
  const args = [
    '--unshare-user',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-net',
    '--unshare-cgroup',
    // No nested user namespaces: they are the usual way into kernel attack surface.
    '--disable-userns',
    '--hostname',
    'sandbox',
    ...systemRootArgs(),
    '--proc',
    '/proc',
    ...devArgs(),
  ];
  if (plan.scratchHostDir !== undefined) {
    // A host tmpfs mounted size-capped, noexec, nosuid, nodev: bwrap keeps those flags, and
    // /tmp and /dev/shm draw on its one size cap.
    const { tmp, shm } = scratchLayout(plan.scratchHostDir);
    args.push('--bind', tmp, '/tmp', '--bind', shm, '/dev/shm');
  } else {
    // No /dev/shm here: bwrap cannot make a tmpfs noexec, and a second one would have a cap of
    // its own; a program that needs shm fails cleanly (ENOENT) instead.
    args.push('--size', String(plan.scratchBytes), '--perms', '1777', '--tmpfs', '/tmp');
  }
  for (const bind of plan.binds) args.push('--ro-bind', bind.source, bind.target);
  // After the read-only binds, so a workspace inside a read-only folder stays writable.
  for (const bind of plan.writableBinds ?? []) args.push('--bind', bind.source, bind.target);
  if (plan.egressSocket !== undefined) {
    args.push('--dir', '/run/toolgate', '--bind', plan.egressSocket, EGRESS_SOCKET_PATH);
  }
  // Read-only root: the tool may write to its scratch only, not into the root's own tmpfs.
  args.push('--remount-ro', '/');
  args.push(
    '--uid',
    '65534',
    '--gid',
    '65534',
    '--cap-drop',
    'ALL',
    '--new-session',
    '--die-with-parent',
    '--clearenv',
  );
  for (const [name, value] of Object.entries(plan.env)) args.push('--setenv', name, value);
  args.push('--chdir', '/tmp', '--', ...argv);
  return args;
}
