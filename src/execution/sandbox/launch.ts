/**
 * @module Supervises the host-side process of one sandbox (the driver's wrapper: prlimit, bwrap
 * or runsc): feeds stdin, caps stdout/stderr, kills the whole process group at the wall-clock
 * limit or when output overflows, and classifies how it ended. Shared by every driver so each
 * limit means the same thing whichever isolation a tool asks for.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { SandboxLimits } from '../../domain/catalog/index.js';
import { CappedBuffer } from './capped-buffer.js';
import { findExecutable } from './host-tools.js';
import {
  cgroupHost,
  ENTER_EXIT,
  ENTER_FAILED,
  enterArgv,
  type MemoryEnforcement,
  RunCgroup,
} from './memory-cgroup.js';
import { type MemoryCount, treeUsage } from './process-tree.js';
import { emptyRecord, type MemoryReport, type RunOutcome, type RunRecord } from './run-outcome.js';
import type { DriverName, RunSpec } from './run-spec.js';
import type { SandboxProcess } from './sandbox-runner.js';

/** How a driver starts its sandbox; built per run, never from a shell string. */
export interface Launch {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly uid?: number;
  readonly gid?: number;
  /**
   * Watch the process tree from the host: with `cpu`, its CPU time, where RLIMIT_CPU cannot be
   * relied on (gVisor's own kernel sends no SIGXCPU); and its memory against `memory_mb` when no
   * cgroup holds it (memory-cgroup.ts; process-tree.ts, `memory` says how it shows on the host).
   */
  readonly watch?: { readonly memory: MemoryCount; readonly cpu: boolean };
  /**
   * MB the run's cgroup allows beyond `memory_mb` for the sandbox's own machinery that is not the
   * tool's (gVisor's sentry); the tool's own pages are still watched against `memory_mb`.
   */
  readonly machineryMb?: number;
  /** Extra teardown after the process group was killed (e.g. `runsc kill`); never throws. */
  readonly kill?: () => Promise<void>;
  /**
   * Removes what the run left on the host (scratch mounts, bundles); never throws. `killed`: the
   * sandbox was killed rather than ending by itself, so its processes may still be dying.
   */
  readonly cleanup: (killed: boolean) => Promise<void>;
}

/** After the wrapper exits, how long its pipes may stay open (held by an orphan) before we cut. */
const PIPE_GRACE_MS = 100;

const WATCH_MS = 50;
const MEMORY_PATTERNS =
  /\bOOM\b|out of memory|cannot allocate memory|memoryerror|bad_alloc|allocation failed|memory exhausted|unable to allocate/i;
const SCRATCH_PATTERNS = /no space left on device|disk quota exceeded|file size limit exceeded/i;

function signalName(signal: NodeJS.Signals | null, code: number | null): string | null {
  if (signal) return signal;
  // bwrap and runsc report a child killed by a signal as 128 + its number.
  if (code !== null && code > 128 && code < 128 + 65) {
    const n = code - 128;
    for (const [name, value] of Object.entries(constants.signals)) if (value === n) return name;
  }
  return null;
}

function killGroup(child: ChildProcess): void {
  // Never -0 or -1 (toolgate's own group, every process): only a started child's group.
  if (child.pid === undefined || child.pid <= 1) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

type KillReason = 'timeout' | 'output' | 'cpu' | 'memory' | 'closed';

/** Classifies a finished run from how it ended and what it said. */
function classify(
  record: RunRecord,
  killed: KillReason | null,
  limits: SandboxLimits,
  wallTimeMs: number,
): RunOutcome {
  if (killed === 'timeout') return { ...record, kind: 'timeout', limitMs: wallTimeMs };
  if (killed === 'output' || record.stdoutTruncated || record.stderrTruncated) {
    return { ...record, kind: 'output_limit', limitBytes: limits.output_bytes };
  }
  if (killed === 'memory') return { ...record, kind: 'memory_limit', limitMb: limits.memory_mb };
  if (killed === 'cpu' || record.signal === 'SIGXCPU') {
    return { ...record, kind: 'cpu_limit', limitMs: limits.cpu_ms };
  }
  if (record.exitCode === 0 && record.signal === null) return { ...record, kind: 'ok' };
  // RLIMIT_FSIZE is set to the scratch size: a file that big means the scratch is full.
  if (record.signal === 'SIGXFSZ') {
    return { ...record, kind: 'scratch_full', limitMb: limits.scratch_mb };
  }
  if (MEMORY_PATTERNS.test(record.stderr)) {
    return { ...record, kind: 'memory_limit', limitMb: limits.memory_mb };
  }
  if (SCRATCH_PATTERNS.test(record.stderr)) {
    return { ...record, kind: 'scratch_full', limitMb: limits.scratch_mb };
  }
  return { ...record, kind: 'exit_nonzero' };
}

/** The memory side of one run: its cgroup, when the host has them, and what its record says. */
interface RunMemory {
  readonly cgroup: RunCgroup | null;
  readonly enforcement: MemoryEnforcement;
}

/** Makes the run's cgroup (memory-cgroup.ts). Throws when the host has cgroups and this fails. */
function openMemory(launch: Launch, limits: SandboxLimits): RunMemory {
  const host = cgroupHost();
  if (host.version === null && host.refused) throw new Error(host.reason);
  if (host.version === null) return { cgroup: null, enforcement: 'rlimit-watch' };
  return {
    cgroup: RunCgroup.create(host, limits.memory_mb + (launch.machineryMb ?? 0)),
    enforcement: host.version === 2 ? 'cgroup-v2' : 'cgroup-v1',
  };
}

function spawnLaunch(launch: Launch, cgroup: RunCgroup | null): ChildProcess {
  let argv = [launch.command, ...launch.args];
  let user = launch.uid !== undefined || launch.gid !== undefined;
  if (cgroup) {
    // Entering the cgroup takes root; the uid is dropped after, inside it.
    const setpriv = user ? findExecutable('setpriv') : null;
    if (user && !setpriv) throw new Error('setpriv (util-linux) not found');
    const as =
      user && setpriv
        ? { uid: launch.uid ?? 0, gid: launch.gid ?? launch.uid ?? 0, setpriv }
        : null;
    argv = enterArgv(cgroup, launch.command, launch.args, as);
    user = false;
  }
  const [command, ...args] = argv as [string, ...string[]];
  return spawn(command, args, {
    env: { ...launch.env },
    stdio: ['pipe', 'pipe', 'pipe'],
    // Its own process group, so a timeout kills the whole tree.
    detached: true,
    ...(launch.cwd !== undefined ? { cwd: launch.cwd } : {}),
    ...(user && launch.uid !== undefined ? { uid: launch.uid } : {}),
    ...(user && launch.gid !== undefined ? { gid: launch.gid } : {}),
  });
}

/**
 * One look at a running sandbox: the kernel killed inside its cgroup at the limit (memory), or
 * the host's watch finds it past `memory_mb` (no cgroup, or gVisor's memory file: the tool's own
 * pages) or past its CPU time. Null: nothing to stop.
 */
function look(launch: Launch, memory: RunMemory, pid: number, limits: SandboxLimits) {
  if (memory.cgroup?.overLimit()) return 'memory';
  const watch = launch.watch;
  if (!watch) return null;
  const watchMemory = memory.cgroup === null || watch.memory === 'memory-file';
  if (!watchMemory && !watch.cpu) return null;
  const usage = treeUsage(pid, watch.memory);
  if (watchMemory && usage.memoryMb > limits.memory_mb) return 'memory';
  if (watch.cpu && usage.cpuMs > limits.cpu_ms) return 'cpu';
  return null;
}

/** The record's memory fields, and whether the kernel killed inside the run at its limit. */
function endMemory(memory: RunMemory): { report: MemoryReport; oom: boolean } {
  const reading = memory.cgroup?.read();
  return {
    report: { enforcement: memory.enforcement, peakMb: reading?.peakMb ?? null },
    oom: (reading?.oomKills ?? 0) > 0 || (memory.cgroup?.socketsOverLimit() ?? false),
  };
}

/**
 * Prepares a launch (a scratch mount, an OCI bundle) and runs it. A preparation that fails is a
 * `spawn_failed` outcome saying what could not be prepared. Never throws.
 */
export async function runPrepared(
  driver: DriverName,
  prepare: () => Promise<Launch>,
  spec: RunSpec,
  what: string,
): Promise<RunOutcome> {
  let launch: Launch;
  try {
    launch = await prepare();
  } catch (err) {
    return {
      ...emptyRecord(driver),
      kind: 'spawn_failed',
      reason: `could not ${what}: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
  return runLaunch(driver, launch, spec.limits, spec.stdin);
}

/** A run that failed before its program started. */
function failedStart(driver: DriverName, what: string, err: unknown, started: number): RunOutcome {
  return {
    ...emptyRecord(driver),
    kind: 'spawn_failed',
    reason: `${what}${err instanceof Error ? err.message : String(err)}`,
    durationMs: performance.now() - started,
  };
}

/** Runs a launch to completion. Never throws; never buffers more than the output cap. */
export async function runLaunch(
  driver: DriverName,
  launch: Launch,
  limits: SandboxLimits,
  stdin: string | Uint8Array | undefined,
): Promise<RunOutcome> {
  const started = performance.now();
  const stdout = new CappedBuffer(limits.output_bytes);
  const stderr = new CappedBuffer(limits.output_bytes);
  let killed: KillReason | null = null;
  let memory: RunMemory;
  try {
    memory = openMemory(launch, limits);
  } catch (err) {
    await launch.cleanup(true);
    return failedStart(driver, "could not make the run's memory cgroup: ", err, started);
  }
  let child: ChildProcess;
  try {
    child = spawnLaunch(launch, memory.cgroup);
  } catch (err) {
    await memory.cgroup?.remove();
    await launch.cleanup(true);
    return failedStart(driver, '', err, started);
  }
  const result = await new Promise<RunOutcome>((resolve) => {
    let spawnError: Error | null = null;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    const stop = (reason: KillReason): void => {
      if (killed === null) killed = reason;
      killGroup(child);
      memory.cgroup?.kill();
      void launch.kill?.();
    };
    const timer = setTimeout(() => stop('timeout'), limits.wall_time_ms);
    const watcher =
      (launch.watch || memory.cgroup) && child.pid !== undefined
        ? setInterval(() => {
            if (child.pid === undefined || killed !== null) return;
            const reason = look(launch, memory, child.pid, limits);
            if (reason) stop(reason);
          }, WATCH_MS)
        : null;
    child.stdout?.on('data', (chunk: Buffer) => {
      if (!stdout.push(chunk)) stop('output');
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (!stderr.push(chunk)) stop('output');
    });
    child.stdin?.on('error', () => {
      // The program closed stdin early (EPIPE): not a failure of the run by itself.
    });
    child.stdin?.end(stdin ?? '');
    child.on('error', (err) => {
      spawnError = err;
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // Anything left in the group (a background process) dies with the run.
      killGroup(child);
      setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, PIPE_GRACE_MS).unref();
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (watcher) clearInterval(watcher);
      const end = exit ?? { code, signal };
      const { report, oom } = endMemory(memory);
      if (oom && killed === null) killed = 'memory';
      const record: RunRecord = {
        driver,
        stdout: stdout.text(),
        stderr: stderr.text(),
        stdoutTruncated: stdout.truncated,
        stderrTruncated: stderr.truncated,
        exitCode: end.code,
        signal: signalName(end.signal, end.code),
        durationMs: performance.now() - started,
        memory: report,
      };
      if (spawnError && end.code === null && end.signal === null) {
        resolve({ ...record, kind: 'spawn_failed', reason: spawnError.message });
      } else if (end.code === ENTER_EXIT && record.stderr.includes(ENTER_FAILED)) {
        resolve({ ...record, kind: 'spawn_failed', reason: record.stderr.trim() });
      } else {
        resolve(classify(record, killed, limits, limits.wall_time_ms));
      }
    });
  });
  // The run's cgroup goes first (whatever is left in it is killed); then the teardown (unmounting,
  // removing bundles) runs after the caller has its answer: nothing of the run still executes.
  await memory.cgroup?.remove();
  void launch.cleanup(killed !== null);
  return result;
}

/** How often a long-lived sandbox's cgroup is read for a kill at its memory limit. */
const LONG_WATCH_MS = 250;

/** Starts a launch and hands its stdio to the caller (MCP stdio servers). */
export async function startLaunch(
  driver: DriverName,
  launch: Launch,
  limits: SandboxLimits,
  wallTimeMs: number | undefined,
): Promise<SandboxProcess> {
  const started = performance.now();
  let memory: RunMemory;
  try {
    memory = openMemory(launch, limits);
  } catch (err) {
    await launch.cleanup(true);
    throw err;
  }
  let child: ChildProcess;
  try {
    child = spawnLaunch(launch, memory.cgroup);
  } catch (err) {
    await memory.cgroup?.remove();
    await launch.cleanup(true);
    throw err;
  }
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', () => resolve());
    child.once('error', (err) => {
      void memory.cgroup?.remove().then(() => launch.cleanup(true));
      reject(err);
    });
  });
  let killed: KillReason | null = null;
  const stop = (reason: KillReason): void => {
    if (killed === null) killed = reason;
    killGroup(child);
    memory.cgroup?.kill();
    void launch.kill?.();
  };
  const timer = wallTimeMs !== undefined ? setTimeout(() => stop('timeout'), wallTimeMs) : null;
  const watcher = memory.cgroup
    ? setInterval(() => {
        if (killed === null && memory.cgroup?.overLimit()) stop('memory');
      }, LONG_WATCH_MS)
    : null;
  watcher?.unref();
  const exited = new Promise<RunOutcome>((resolve) => {
    child.on('exit', (code, signal) => {
      if (timer) clearTimeout(timer);
      if (watcher) clearInterval(watcher);
      killGroup(child);
      const { report, oom } = endMemory(memory);
      if (oom && killed === null) killed = 'memory';
      const record: RunRecord = {
        ...emptyRecord(driver),
        exitCode: code,
        signal: signalName(signal, code),
        durationMs: performance.now() - started,
        memory: report,
      };
      void (memory.cgroup?.remove() ?? Promise.resolve())
        .then(() => launch.cleanup(killed !== null))
        .then(() => {
          if (killed === 'closed') resolve({ ...record, kind: 'ok' });
          else resolve(classify(record, killed, limits, wallTimeMs ?? 0));
        });
    });
  });
  const { stdin, stdout, stderr } = child;
  if (!stdin || !stdout || !stderr) throw new Error('sandbox process has no stdio pipes');
  stdin.on('error', () => {
    // A process that went away closes its stdin; the caller sees it on `exited`.
  });
  return {
    stdin,
    stdout,
    stderr,
    exited,
    close: async () => {
      stop('closed');
      return exited;
    },
  };
}
