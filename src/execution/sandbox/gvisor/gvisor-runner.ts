/**
 * @module The `gvisor` driver: runsc (gVisor) with `--rootless --network=none`, one OCI bundle
 * and one container per run, destroyed afterwards. The sandbox kernel is gVisor's, so a tool's
 * syscalls never reach the host kernel directly. `--host-uds=open` is added only when an egress
 * socket is bound in.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_SANDBOX_LIMITS } from '../../../domain/catalog/index.js';
import { withEgressBridge } from '../egress-bridge.js';
import { findExecutable } from '../host-tools.js';
import { type Launch, runPrepared, startLaunch } from '../launch.js';
import { driverUnavailable, type RunOutcome } from '../run-outcome.js';
import { type LongLivedSpec, type RunSpec, sandboxEnv } from '../run-spec.js';
import type { DriverProbe, SandboxProcess, SandboxRunner } from '../sandbox-runner.js';
import { writeBundle } from './oci-bundle.js';

const exec = promisify(execFile);
const INSTALL = 'install gVisor (apt-get install runsc)';

/**
 * What the run's cgroup allows beyond `memory_mb` for gVisor itself (the sentry's heap, the gofer,
 * runsc): the tool's own pages, in the sentry's memory file, are watched against `memory_mb`.
 */
export const GVISOR_MACHINERY_MB = 64;

export class GvisorRunner implements SandboxRunner {
  readonly name = 'gvisor' as const;
  #probe: Promise<DriverProbe> | null = null;
  readonly #binary: string | null;

  /** `runsc`: the runsc executable to use instead of the one on PATH (null: none found). */
  constructor(options: { readonly runsc?: string } = {}) {
    this.#binary = options.runsc ?? findExecutable('runsc');
  }

  probe(): Promise<DriverProbe> {
    this.#probe ??= this.#doProbe();
    return this.#probe;
  }

  async #doProbe(): Promise<DriverProbe> {
    const base = { driver: this.name, install: INSTALL };
    const runsc = this.#binary;
    if (!runsc) return { ...base, available: false, detail: 'runsc not found', notes: [] };
    const outcome = await this.#run({ argv: ['true'], limits: DEFAULT_SANDBOX_LIMITS });
    if (outcome.kind !== 'ok') {
      const why = outcome.kind === 'spawn_failed' ? outcome.reason : outcome.stderr.trim();
      return {
        ...base,
        available: false,
        detail: `runsc could not run true: ${why.slice(-500)}`,
        notes: [],
      };
    }
    return {
      ...base,
      available: true,
      detail: runsc,
      notes: ['runsc run with a minimal OCI bundle (not runsc do: it exposes the host root)'],
    };
  }

  async #launch(spec: RunSpec | LongLivedSpec): Promise<Launch> {
    const runsc = this.#binary ?? 'runsc';
    const dir = await mkdtemp(join(tmpdir(), 'toolgate-gvisor-'));
    const id = `toolgate-${randomBytes(8).toString('hex')}`;
    const state = join(dir, 'state');
    const egress = spec.egressSocket !== undefined;
    try {
      await writeBundle(dir, {
        argv: withEgressBridge(spec.argv, egress),
        env: sandboxEnv(spec),
        limits: spec.limits,
        binds: spec.binds ?? [],
        ...(spec.writableBinds ? { writableBinds: spec.writableBinds } : {}),
        ...(egress && spec.egressSocket !== undefined ? { egressSocket: spec.egressSocket } : {}),
      });
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
    const global = [
      // runsc would move its sandbox into cgroups of its own at the hierarchy's root (and leave
      // them behind when killed): it stays in the run's cgroup instead (memory-cgroup.ts).
      '--ignore-cgroups',
      '--rootless',
      '--network=none',
      ...(egress ? ['--host-uds=open'] : []),
      '--root',
      state,
    ];
    return {
      command: runsc,
      args: [...global, 'run', '--bundle', dir, id],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      // gVisor's kernel delivers no SIGXCPU and ignores RLIMIT_DATA: the host watches instead.
      // runsc → runsc-sandbox → the tool's address spaces (ptrace platform stubs) at depth 2+.
      watch: { memory: 'memory-file', cpu: true },
      machineryMb: GVISOR_MACHINERY_MB,
      kill: async () => {
        await exec(runsc, [...global, 'kill', '--all', id, 'KILL']).catch(() => undefined);
      },
      cleanup: async (killed) => {
        if (killed) {
          await exec(runsc, [...global, 'delete', '--force', id]).catch(() => undefined);
        }
        await rm(dir, { recursive: true, force: true }).catch(() => undefined);
      },
    };
  }

  #run(spec: RunSpec): Promise<RunOutcome> {
    return runPrepared(this.name, () => this.#launch(spec), spec, 'write the OCI bundle');
  }

  async run(spec: RunSpec): Promise<RunOutcome> {
    const probe = await this.probe();
    if (!probe.available) return driverUnavailable(this.name, probe.detail, probe.install);
    return this.#run(spec);
  }

  async start(spec: LongLivedSpec): Promise<SandboxProcess> {
    const probe = await this.probe();
    if (!probe.available) throw new Error(`gvisor driver unavailable: ${probe.detail}`);
    return startLaunch(this.name, await this.#launch(spec), spec.limits, spec.wallTimeMs);
  }
}
