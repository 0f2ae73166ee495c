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
import { type MemoryCount, treeUsage } from './process-tree.js';
import { emptyRecord, type RunOutcome, type RunRecord } from './run-outcome.js';
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
   * Watch the process tree from the host: its memory against `memory_mb` in every driver
   * (process-tree.ts, `memory` says how it shows on the host; RLIMIT_DATA counts address space a
   * runtime reserves, not memory it uses), and, with `cpu`, its CPU time, where RLIMIT_CPU cannot
   * be relied on (gVisor's own kernel sends no SIGXCPU).
   */
  readonly watch?: { readonly memory: MemoryCount; readonly cpu: boolean };
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
  if (child.pid === undefined) return;
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

function spawnLaunch(launch: Launch): ChildProcess {
  return spawn(launch.command, [...launch.args], {
    env: { ...launch.env },
    stdio: ['pipe', 'pipe', 'pipe'],
    // Its own process group, so a timeout kills the whole tree.
    detached: true,
    ...(launch.cwd !== undefined ? { cwd: launch.cwd } : {}),
    ...(launch.uid !== undefined ? { uid: launch.uid } : {}),
    ...(launch.gid !== undefined ? { gid: launch.gid } : {}),
  });
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
  let child: ChildProcess;
  try {
    child = spawnLaunch(launch);
  } catch (err) {
    await launch.cleanup(true);
    return {
      ...emptyRecord(driver),
      kind: 'spawn_failed',
      reason: err instanceof Error ? err.message : String(err),
      durationMs: performance.now() - started,
    };
  }
  const result = await new Promise<RunOutcome>((resolve) => {
    let spawnError: Error | null = null;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    const stop = (reason: KillReason): void => {
      if (killed === null) killed = reason;
      killGroup(child);
      void launch.kill?.();
    };
    const timer = setTimeout(() => stop('timeout'), limits.wall_time_ms);
    const watch = launch.watch;
    const cpuWatch =
      watch && child.pid !== undefined
        ? setInterval(() => {
            if (child.pid === undefined || killed !== null) return;
            const usage = treeUsage(child.pid, watch.memory);
            if (usage.memoryMb > limits.memory_mb) stop('memory');
            else if (watch.cpu && usage.cpuMs > limits.cpu_ms) stop('cpu');
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
      if (cpuWatch) clearInterval(cpuWatch);
      const end = exit ?? { code, signal };
      const record: RunRecord = {
        driver,
        stdout: stdout.text(),
        stderr: stderr.text(),
        stdoutTruncated: stdout.truncated,
        stderrTruncated: stderr.truncated,
        exitCode: end.code,
        signal: signalName(end.signal, end.code),
        durationMs: performance.now() - started,
      };
      if (spawnError && end.code === null && end.signal === null) {
        resolve({ ...record, kind: 'spawn_failed', reason: spawnError.message });
        return;
      }
      resolve(classify(record, killed, limits, limits.wall_time_ms));
    });
  });
  // Teardown (unmounting, removing bundles) runs after the caller has its answer; the sandbox's
  // processes are already gone, so nothing of the run is still executing.
  void launch.cleanup(killed !== null);
  return result;
}

/** Starts a launch and hands its stdio to the caller (MCP stdio servers). */
export async function startLaunch(
  driver: DriverName,
  launch: Launch,
  limits: SandboxLimits,
  wallTimeMs: number | undefined,
): Promise<SandboxProcess> {
  const started = performance.now();
  const child = spawnLaunch(launch);
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', () => resolve());
    child.once('error', (err) => {
      void launch.cleanup(true);
      reject(err);
    });
  });
  let killed: KillReason | null = null;
  const stop = (reason: KillReason): void => {
    if (killed === null) killed = reason;
    killGroup(child);
    void launch.kill?.();
  };
  const timer = wallTimeMs !== undefined ? setTimeout(() => stop('timeout'), wallTimeMs) : null;
  const exited = new Promise<RunOutcome>((resolve) => {
    child.on('exit', (code, signal) => {
      if (timer) clearTimeout(timer);
      killGroup(child);
      const record: RunRecord = {
        ...emptyRecord(driver),
        exitCode: code,
        signal: signalName(signal, code),
        durationMs: performance.now() - started,
      };
      void launch.cleanup(killed !== null).then(() => {
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
