/**
 * @module A memory cgroup per run, with a hard limit the kernel itself holds: it charges every page
 * the run's processes allocate however they hold it — pipe buffers (vmsplice), detached System V
 * shm, memfds in flight over SCM_RIGHTS, message queues and other kernel memory, gVisor's sentry
 * — and kills inside the run at the limit (attack round 19, V1–V4). cgroup v2 (the unified
 * hierarchy, in a delegated subtree) or v1 (the memory controller, kernel memory included; TCP
 * buffers on a counter of their own, held against the same limit: round 20, W1). Runs' cgroups
 * are children of toolgate's own (/proc/self/cgroup) or of TOOLGATE_SANDBOX_CGROUP, which must lie
 * in the memory hierarchy, else runs are refused (round 20, W7). When
 * none can be made (no root, no delegation) the runs keep the rlimit and the host's watch of their
 * processes (process-tree.ts), and every probe and run record says which one holds.
 */
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmdirSync,
  writeFileSync,
} from 'node:fs';
import { isAbsolute, join } from 'node:path';

/** Which mechanism holds a run's memory: the kernel's cgroup, or rlimit plus the host's watch. */
export type MemoryEnforcement = 'cgroup-v2' | 'cgroup-v1' | 'rlimit-watch';

/** Environment variable naming the cgroup folder runs' cgroups are made in (a delegated one). */
export const CGROUP_ENV = 'TOOLGATE_SANDBOX_CGROUP';

/** Where runs' cgroups go on this host, or why there is no such place. */
export type CgroupHost =
  | { readonly version: 1 | 2; readonly parent: string }
  | {
      readonly version: null;
      readonly reason: string;
      /** TOOLGATE_SANDBOX_CGROUP is set but unusable: runs are refused, not left without a cgroup. */
      readonly refused?: true;
    };

/** Name prefix of run cgroups; the gateway's pid follows, so a later start can sweep its own. */
const PREFIX = 'toolgate-run-';
const MIB = 1024 * 1024;

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

interface Mount {
  readonly root: string;
  readonly point: string;
  readonly fstype: string;
  readonly superOptions: readonly string[];
}

/** The cgroup mounts of /proc/self/mountinfo (`root mountpoint … - fstype source superopts`). */
export function cgroupMounts(mountinfo: string): Mount[] {
  const out: Mount[] = [];
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const fields = left.split(' ');
    const [fstype, , superopts] = right.split(' ');
    if (fstype !== 'cgroup' && fstype !== 'cgroup2') continue;
    out.push({
      root: fields[3] ?? '/',
      point: fields[4] ?? '',
      fstype,
      superOptions: (superopts ?? '').split(','),
    });
  }
  return out;
}

/** A cgroup path of /proc/self/cgroup as a folder under `mount` (null: outside its root). */
function folder(mount: Mount, path: string): string | null {
  if (mount.root === '/') return join(mount.point, path);
  if (path === mount.root || path.startsWith(`${mount.root}/`)) {
    return join(mount.point, path.slice(mount.root.length));
  }
  return null;
}

/** Whether `dir`'s file `name` lists `controller` (cgroup v2's space-separated lists). */
function lists(dir: string, name: string, controller: string): boolean {
  return (read(join(dir, name)) ?? '').split(/\s+/).includes(controller);
}

/** Whether `dir` is `point` or lies below it. */
function within(dir: string, point: string): boolean {
  return dir === point || dir.startsWith(point === '/' ? '/' : `${point}/`);
}

/**
 * Why TOOLGATE_SANDBOX_CGROUP's folder is refused, or null: it must be an absolute path without
 * `..` whose real folder lies in `mount`, the hierarchy holding the memory controller (attack
 * round 20, W7: a plain folder got run folders and files, and a `0` read back from its
 * `cgroup.procs` became kill(0, SIGKILL) of toolgate's own process group).
 */
function configuredProblem(dir: string, mount: Mount): string | null {
  if (!isAbsolute(dir)) return 'it is not an absolute path';
  if (dir.split('/').includes('..')) return 'it holds `..`';
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    return 'it does not exist';
  }
  if (!within(real, mount.point)) {
    const kind = mount.fstype === 'cgroup2' ? 'cgroup v2' : 'cgroup v1 memory';
    return `it is not inside a mounted cgroup hierarchy with the memory controller (the ${kind} hierarchy is ${mount.point})`;
  }
  return null;
}

/**
 * A v2 folder whose children get the memory controller. Our own cgroup holds our process, and v2
 * lets a cgroup with processes enable no controller for its children: toolgate moves itself into a
 * leaf `toolgate-gateway` first (what a delegated subtree, systemd's `Delegate=yes`, is for).
 */
function v2Parent(dir: string, own: boolean): string {
  if (!lists(dir, 'cgroup.controllers', 'memory')) {
    throw new Error(`the memory controller is not delegated to ${dir}`);
  }
  if (lists(dir, 'cgroup.subtree_control', 'memory')) return dir;
  if (!own) {
    writeFileSync(join(dir, 'cgroup.subtree_control'), '+memory');
    return dir;
  }
  const leaf = join(dir, 'toolgate-gateway');
  mkdirSync(leaf, { recursive: true });
  writeFileSync(join(leaf, 'cgroup.procs'), String(process.pid));
  try {
    writeFileSync(join(dir, 'cgroup.subtree_control'), '+memory');
  } catch (err) {
    // Other processes share our cgroup (not a delegated one): back where we were, leaf removed.
    writeFileSync(join(dir, 'cgroup.procs'), String(process.pid));
    rmdirSync(leaf);
    throw err;
  }
  return dir;
}

/**
 * Finds where run cgroups can be made: TOOLGATE_SANDBOX_CGROUP, else toolgate's own cgroup —
 * the memory controller of v1 if it is mounted, else the unified hierarchy. Checks that a child
 * can really be made there (and removes it). Never throws.
 */
export function findCgroupHost(
  env: NodeJS.ProcessEnv = process.env,
  proc = '/proc/self',
): CgroupHost {
  try {
    const mounts = cgroupMounts(read(`${proc}/mountinfo`) ?? '');
    const lines = (read(`${proc}/cgroup`) ?? '').split('\n');
    const pathOf = (match: (controllers: string[]) => boolean): string | null => {
      for (const line of lines) {
        const [, controllers, path] = line.match(/^\d+:([^:]*):(.*)$/) ?? [];
        if (path !== undefined && match((controllers ?? '').split(','))) return path;
      }
      return null;
    };
    const v1 = mounts.find((m) => m.fstype === 'cgroup' && m.superOptions.includes('memory'));
    const v2 = mounts.find((m) => m.fstype === 'cgroup2');
    const configured = env[CGROUP_ENV];
    const mount = v1 ?? v2;
    const problem = configured && mount ? configuredProblem(configured, mount) : null;
    if (configured && (problem || !mount)) {
      const why = problem ?? 'no cgroup memory controller is mounted';
      return refused(configured, why);
    }
    let host: CgroupHost;
    if (v1) {
      const own = pathOf((c) => c.includes('memory'));
      const dir = configured || (own !== null ? folder(v1, own) : null);
      if (!dir) return { version: null, reason: 'toolgate is in no memory cgroup it can see' };
      host = { version: 1, parent: dir };
    } else if (v2) {
      const own = pathOf((c) => c.length === 1 && c[0] === '');
      const dir = configured || (own !== null ? folder(v2, own) : null);
      if (!dir) return { version: null, reason: 'toolgate is in no cgroup v2 it can see' };
      host = { version: 2, parent: v2Parent(dir, !configured) };
    } else {
      return { version: null, reason: 'no cgroup memory controller is mounted' };
    }
    const trial = join(host.parent, `${PREFIX}${process.pid}-probe`);
    mkdirSync(trial);
    rmdirSync(trial);
    sweep(host.parent);
    return host;
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    const configured = env[CGROUP_ENV];
    if (configured) return refused(configured, `no cgroup can be made there: ${why}`);
    return { version: null, reason: `no cgroup can be made: ${why}` };
  }
}

/** Deny by default: a configured folder toolgate cannot use refuses runs rather than drop the limit. */
function refused(configured: string, why: string): CgroupHost {
  return { version: null, reason: `${CGROUP_ENV}=${configured} is refused: ${why}`, refused: true };
}

/** Removes run cgroups an ended gateway left (its pid is in the name); a busy one stays. */
function sweep(parent: string): void {
  for (const name of readdirSync(parent)) {
    const pid = Number(name.slice(PREFIX.length).split('-', 1)[0]);
    if (!name.startsWith(PREFIX) || !Number.isInteger(pid) || pid === process.pid) continue;
    if (existsSync(`/proc/${pid}`)) continue;
    try {
      rmdirSync(join(parent, name));
    } catch {
      // Still holds processes, or gone meanwhile.
    }
  }
}

let cached: CgroupHost | null = null;

/** This host's CgroupHost, found once per process. */
export function cgroupHost(): CgroupHost {
  cached ??= findCgroupHost();
  return cached;
}

/** Which enforcement runs get here, with the detail `toolgate doctor` prints. */
export function memoryEnforcement(host: CgroupHost = cgroupHost()): {
  readonly enforcement: MemoryEnforcement;
  readonly note: string;
} {
  if (host.version === null && host.refused) {
    return {
      enforcement: 'rlimit-watch',
      note: `memory: ${host.reason}; runs are refused until it names a folder of the memory cgroup hierarchy or is unset`,
    };
  }
  if (host.version === null) {
    return {
      enforcement: 'rlimit-watch',
      note: `memory: rlimit and a host watch of the run's processes, NOT a kernel limit (${host.reason}); pipe buffers, System V IPC and in-flight memfds are not counted`,
    };
  }
  return {
    enforcement: host.version === 2 ? 'cgroup-v2' : 'cgroup-v1',
    note: `memory: a cgroup v${host.version} per run under ${host.parent}, hard limit by the kernel (kernel memory, pipes, IPC, socket buffers included)`,
  };
}

/** Counters of a run's cgroup. */
export interface CgroupReading {
  /** Processes the kernel killed at the limit. */
  readonly oomKills: number;
  /** The most the run held at once, in MB. */
  readonly peakMb: number;
}

function numberIn(text: string | null, key: string): number {
  const m = text?.match(new RegExp(`^${key} (\\d+)$`, 'm'));
  return m ? Number(m[1]) : 0;
}

/** One run's cgroup: made with its limit before the run, read during it, removed after. */
export class RunCgroup {
  readonly version: 1 | 2;
  readonly dir: string;
  readonly #limit: number;
  #peak = 0;

  private constructor(version: 1 | 2, dir: string, limit: number) {
    this.version = version;
    this.dir = dir;
    this.#limit = limit;
  }

  /** Makes a cgroup under `host` holding its processes to `limitMb`. Throws when it cannot. */
  static create(host: CgroupHost & { version: 1 | 2 }, limitMb: number): RunCgroup {
    const dir = join(host.parent, `${PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`);
    mkdirSync(dir);
    const cg = new RunCgroup(host.version, dir, limitMb * MIB);
    try {
      const bytes = String(limitMb * MIB);
      if (host.version === 2) {
        cg.#write('memory.max', bytes);
        // No swap to hide in; at the limit the whole run goes, not one of its processes.
        cg.#write('memory.swap.max', '0', true);
        cg.#write('memory.oom.group', '1', true);
      } else {
        cg.#write('memory.limit_in_bytes', bytes);
        cg.#write('memory.memsw.limit_in_bytes', bytes, true);
        // Kernels before 4.6 charge kernel memory only once a kmem limit is set (later: ignored).
        cg.#write('memory.kmem.limit_in_bytes', bytes, true);
        // v1 charges TCP buffers (to a counter of their own) only once this is set (attack round
        // 20, W1): loopback sockets in the run's network namespace held ten times its limit.
        cg.#write('memory.kmem.tcp.limit_in_bytes', bytes, true);
      }
    } catch (err) {
      try {
        rmdirSync(dir);
      } catch {
        // Nothing ran in it: it goes unless the host removed it first.
      }
      throw err;
    }
    return cg;
  }

  #write(file: string, value: string, optional = false): void {
    const path = join(this.dir, file);
    if (optional && !existsSync(path)) return;
    try {
      writeFileSync(path, value);
    } catch (err) {
      if (!optional) throw err;
    }
  }

  /** The file a process writes `0` to to enter this cgroup. */
  get procsFile(): string {
    return join(this.dir, 'cgroup.procs');
  }

  /** OOM kills so far and the peak; never throws (a removed cgroup reads as zeros). */
  read(): CgroupReading {
    const v2 = this.version === 2;
    const oomKills = v2
      ? numberIn(read(join(this.dir, 'memory.events')), 'oom_kill')
      : numberIn(read(join(this.dir, 'memory.oom_control')), 'oom_kill');
    const peakFile = v2 ? 'memory.peak' : 'memory.max_usage_in_bytes';
    const nowFile = v2 ? 'memory.current' : 'memory.usage_in_bytes';
    const peak = Number(read(join(this.dir, peakFile)) ?? read(join(this.dir, nowFile)) ?? 0);
    if (Number.isFinite(peak) && peak > this.#peak) this.#peak = peak;
    return { oomKills, peakMb: Math.round((this.#peak / MIB) * 10) / 10 };
  }

  /**
   * cgroup v1 only: whether the run's TCP buffers reached its limit (their own counter's peak, which
   * the kernel holds at the limit), or together with its other memory (reclaimable file cache
   * aside) pass it. v1 keeps socket memory out of memory.usage_in_bytes, so no OOM kill comes of it
   * (attack round 20, W1); v2 charges it to memory.current, and the kernel's own kill covers it.
   */
  socketsOverLimit(): boolean {
    if (this.version !== 1) return false;
    const bytes = (file: string): number => Number(read(join(this.dir, file)) ?? 0) || 0;
    if (bytes('memory.kmem.tcp.max_usage_in_bytes') >= this.#limit - MIB) return true;
    const sockets = bytes('memory.kmem.tcp.usage_in_bytes');
    if (sockets === 0) return false;
    const stat = read(join(this.dir, 'memory.stat'));
    const cache = numberIn(stat, 'total_inactive_file') + numberIn(stat, 'total_active_file');
    return bytes('memory.usage_in_bytes') - cache + sockets > this.#limit;
  }

  /** Whether the run met its limit: the kernel killed inside it, or its sockets reached it. */
  overLimit(): boolean {
    return this.read().oomKills > 0 || this.socketsOverLimit();
  }

  /** Kills whatever still runs in it. */
  kill(): void {
    if (this.version === 2 && existsSync(join(this.dir, 'cgroup.kill'))) {
      this.#write('cgroup.kill', '1', true);
      return;
    }
    for (const line of (read(this.procsFile) ?? '').split('\n')) {
      // Only a real pid: 0 or a negative one would signal a process group (toolgate's own), 1 init.
      if (!/^\d+$/.test(line.trim())) continue;
      const pid = Number(line.trim());
      if (pid <= 1 || pid === process.pid) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
  }

  /**
   * Removes it, killing what is left and waiting (up to `waitMs`) for dying processes to leave it.
   * Never throws; false when it is still there.
   */
  async remove(waitMs = 5_000): Promise<boolean> {
    const until = performance.now() + waitMs;
    for (;;) {
      try {
        rmdirSync(this.dir);
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
        if (performance.now() > until) return false;
      }
      this.kill();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/**
 * Enters the cgroup (`$1`), then execs the rest: the process is in the cgroup before the sandbox
 * exists, so everything the sandbox starts is born inside it. A process started first and moved
 * after could fork before the move and leave its child outside. Exits 125 when it cannot enter.
 */
const ENTER = `echo 0 > "$1" || { echo "toolgate: cannot enter the run cgroup" >&2; exit 125; }
shift
exec "$@"`;

/** What ENTER prints when the cgroup refuses the process: the run never started. */
export const ENTER_FAILED = 'toolgate: cannot enter the run cgroup';
/** ENTER's exit status when it cannot enter. */
export const ENTER_EXIT = 125;

/**
 * The argv that runs `command args` inside `cgroup`, as root until it is inside, then as `uid`/
 * `gid` (when given) through setpriv, which drops the supplementary groups as a spawn with a uid
 * does.
 */
export function enterArgv(
  cgroup: RunCgroup,
  command: string,
  args: readonly string[],
  user: { readonly uid: number; readonly gid: number; readonly setpriv: string } | null,
): string[] {
  const drop = user
    ? [
        user.setpriv,
        '--reuid',
        String(user.uid),
        '--regid',
        String(user.gid),
        '--clear-groups',
        '--',
      ]
    : [];
  return ['/bin/sh', '-c', ENTER, 'toolgate-cgroup', cgroup.procsFile, ...drop, command, ...args];
}
