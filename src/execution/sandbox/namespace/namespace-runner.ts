/**
 * @module The `namespace` driver: bubblewrap with new user, pid, ipc, uts, net, cgroup and mount
 * namespaces, a read-only root of system directories and device nodes, a size-capped noexec
 * scratch (also its /dev/shm), uid/gid 65534, every capability dropped, a new session, and death
 * with its parent; rlimits are set inside by prlimit. When toolgate runs as root, bwrap itself
 * runs as the host's nobody, so the sandbox user maps to an unprivileged host user, not root.
 */
import { DEFAULT_SANDBOX_LIMITS } from '../../../domain/catalog/index.js';
import { withEgressBridge } from '../egress-bridge.js';
import { findExecutable, NOBODY, runningAsRoot } from '../host-tools.js';
import { type Launch, runPrepared, startLaunch } from '../launch.js';
import { prlimitArgv } from '../rlimits.js';
import { driverUnavailable, type RunOutcome } from '../run-outcome.js';
import { type LongLivedSpec, type RunSpec, sandboxEnv } from '../run-spec.js';
import type { DriverProbe, SandboxProcess, SandboxRunner } from '../sandbox-runner.js';
import { reachableBinds } from './bind-staging.js';
import { bwrapArgs } from './bwrap-args.js';
import { ScratchPool } from './scratch-pool.js';

const INSTALL = 'install bubblewrap (apt-get install bubblewrap) and util-linux (prlimit)';
const MIB = 1024 * 1024;

export class NamespaceRunner implements SandboxRunner {
  readonly name = 'namespace' as const;
  #probe: Promise<DriverProbe> | null = null;
  readonly #binary: string | null;

  /** `bwrap`: the bwrap executable to use instead of the one on PATH (null: none found). */
  constructor(options: { readonly bwrap?: string } = {}) {
    this.#binary = options.bwrap ?? findExecutable('bwrap');
  }
  /** Whether a host tmpfs can be mounted per run (root): the only way to a noexec scratch. */
  #hostScratch = runningAsRoot();
  readonly #pool = new ScratchPool();

  probe(): Promise<DriverProbe> {
    this.#probe ??= this.#doProbe();
    return this.#probe;
  }

  async #doProbe(): Promise<DriverProbe> {
    const base = { driver: this.name, install: INSTALL };
    const bwrap = this.#binary;
    if (!bwrap) return { ...base, available: false, detail: 'bwrap not found', notes: [] };
    if (!findExecutable('prlimit')) {
      return { ...base, available: false, detail: 'prlimit not found', notes: [] };
    }
    let outcome = await this.#run({ argv: ['true'], limits: DEFAULT_SANDBOX_LIMITS });
    if (outcome.kind !== 'ok' && this.#hostScratch) {
      // Mounting the scratch failed (no privilege here): fall back to bwrap's own tmpfs.
      this.#hostScratch = false;
      outcome = await this.#run({ argv: ['true'], limits: DEFAULT_SANDBOX_LIMITS });
    }
    if (outcome.kind !== 'ok') {
      const why = outcome.kind === 'spawn_failed' ? outcome.reason : outcome.stderr.trim();
      return { ...base, available: false, detail: `bwrap could not run true: ${why}`, notes: [] };
    }
    return {
      ...base,
      available: true,
      detail: `${bwrap}`,
      notes: this.#hostScratch
        ? [
            'scratch: per-run tmpfs, size-capped, noexec, nosuid, nodev',
            '/dev: read-only, device nodes only; /dev/shm on the scratch (its cap, noexec)',
          ]
        : [
            'scratch: bwrap tmpfs, size-capped, nosuid, nodev — NOT noexec (toolgate is not root)',
            '/dev: read-only, device nodes only; no /dev/shm (toolgate is not root)',
          ],
    };
  }

  async #scratch(limits: RunSpec['limits']): Promise<string | undefined> {
    return this.#hostScratch ? this.#pool.take(limits.scratch_mb) : undefined;
  }

  async #launch(spec: RunSpec | LongLivedSpec): Promise<Launch> {
    const root = runningAsRoot();
    // bwrap runs as nobody when toolgate is root: sources nobody cannot reach are staged first
    // (before the scratch is taken, so a failure here leaves nothing behind).
    const binds = root ? await reachableBinds(spec.binds ?? []) : (spec.binds ?? []);
    const writableBinds =
      spec.writableBinds && root ? await reachableBinds(spec.writableBinds) : spec.writableBinds;
    const scratch = await this.#scratch(spec.limits);
    const inner = withEgressBridge(
      [...prlimitArgv(spec.limits, '/usr/bin/prlimit'), ...spec.argv],
      spec.egressSocket !== undefined,
    );
    const args = bwrapArgs(
      {
        ...(scratch !== undefined ? { scratchHostDir: scratch } : {}),
        scratchBytes: spec.limits.scratch_mb * MIB,
        binds,
        ...(writableBinds ? { writableBinds } : {}),
        ...(spec.egressSocket !== undefined ? { egressSocket: spec.egressSocket } : {}),
        env: sandboxEnv(spec),
      },
      inner,
    );
    return {
      command: this.#binary ?? 'bwrap',
      args,
      env: {},
      ...(root ? { uid: NOBODY, gid: NOBODY } : {}),
      // Memory: the run's cgroup (memory-cgroup.ts), else its resident memory watched from here.
      watch: { memory: 'resident', cpu: false },
      cleanup: async (killed) => {
        if (scratch === undefined) return;
        // A killed sandbox may still be dying: its scratch is dropped, never handed on.
        if (killed) await this.#pool.discard(scratch);
        else await this.#pool.release(scratch, spec.limits.scratch_mb);
      },
    };
  }

  #run(spec: RunSpec): Promise<RunOutcome> {
    return runPrepared(this.name, () => this.#launch(spec), spec, 'prepare the scratch and binds');
  }

  async run(spec: RunSpec): Promise<RunOutcome> {
    const probe = await this.probe();
    if (!probe.available) return driverUnavailable(this.name, probe.detail, probe.install);
    return this.#run(spec);
  }

  async start(spec: LongLivedSpec): Promise<SandboxProcess> {
    const probe = await this.probe();
    if (!probe.available) throw new Error(`namespace driver unavailable: ${probe.detail}`);
    return startLaunch(this.name, await this.#launch(spec), spec.limits, spec.wallTimeMs);
  }
}
