/**
 * @module The `process` driver: a child process under rlimits only, in its own process group and
 * a fresh scratch directory. It shares the host's filesystem view and network, so the sandbox
 * service allows it only for tools that declare pure computation (no data, no egress).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_SANDBOX_LIMITS } from '../../catalog/index.js';
import { findExecutable, NOBODY, runningAsRoot } from '../host-tools.js';
import { type Launch, runLaunch, startLaunch } from '../launch.js';
import { prlimitArgv } from '../rlimits.js';
import { driverUnavailable, type RunOutcome } from '../run-outcome.js';
import { type LongLivedSpec, type RunSpec, sandboxEnv } from '../run-spec.js';
import type { DriverProbe, SandboxProcess, SandboxRunner } from '../sandbox-runner.js';

const INSTALL = 'install util-linux (prlimit, setpriv)';

export class ProcessRunner implements SandboxRunner {
  readonly name = 'process' as const;
  #probe: Promise<DriverProbe> | null = null;

  probe(): Promise<DriverProbe> {
    this.#probe ??= this.#doProbe();
    return this.#probe;
  }

  async #doProbe(): Promise<DriverProbe> {
    const base = { driver: this.name, install: INSTALL };
    const prlimit = findExecutable('prlimit');
    if (!prlimit || !findExecutable('setpriv')) {
      return { ...base, available: false, detail: 'prlimit or setpriv not found', notes: [] };
    }
    const outcome = await this.#run({ argv: ['true'], limits: DEFAULT_SANDBOX_LIMITS }, prlimit);
    return outcome.kind === 'ok'
      ? {
          ...base,
          available: true,
          detail: `rlimits via ${prlimit}`,
          notes: ['host filesystem and network visible: pure computation only'],
        }
      : { ...base, available: false, detail: `running true failed: ${outcome.kind}`, notes: [] };
  }

  async #launch(spec: RunSpec | LongLivedSpec, prlimit: string): Promise<Launch> {
    const scratch = await mkdtemp(join(tmpdir(), 'toolgate-scratch-'));
    const root = runningAsRoot();
    if (root) {
      const { chown } = await import('node:fs/promises');
      await chown(scratch, NOBODY, NOBODY);
    }
    // No new privileges: a setuid binary on the host cannot raise the tool's rights.
    const setpriv = findExecutable('setpriv') ?? 'setpriv';
    const argv = [
      setpriv,
      '--no-new-privs',
      '--',
      ...prlimitArgv(spec.limits, prlimit),
      ...spec.argv,
    ];
    const [command, ...args] = argv as [string, ...string[]];
    return {
      command,
      args,
      env: {
        ...sandboxEnv({ ...(spec.env ? { env: spec.env } : {}) }),
        HOME: scratch,
        TMPDIR: scratch,
      },
      cwd: scratch,
      // Root bypasses RLIMIT_NPROC: drop to nobody so the process limit holds.
      ...(root ? { uid: NOBODY, gid: NOBODY } : {}),
      cleanup: () => rm(scratch, { recursive: true, force: true }).catch(() => undefined),
    };
  }

  async #run(spec: RunSpec, prlimit: string): Promise<RunOutcome> {
    return runLaunch(this.name, await this.#launch(spec, prlimit), spec.limits, spec.stdin);
  }

  async run(spec: RunSpec): Promise<RunOutcome> {
    const probe = await this.probe();
    if (!probe.available) return driverUnavailable(this.name, probe.detail, probe.install);
    // The host filesystem is visible as it is: a bind can only be honoured at its own path.
    const moved =
      (spec.binds ?? []).some((b) => b.source !== b.target) ||
      (spec.writableBinds ?? []).length > 0;
    if (spec.egressSocket !== undefined || moved) {
      return driverUnavailable(
        this.name,
        'the process driver cannot move files or bridge egress (no mount or network namespace)',
        'use the namespace or gvisor isolation',
      );
    }
    return this.#run(spec, findExecutable('prlimit') ?? 'prlimit');
  }

  async start(spec: LongLivedSpec): Promise<SandboxProcess> {
    const probe = await this.probe();
    if (!probe.available) throw new Error(`process driver unavailable: ${probe.detail}`);
    if ((spec.writableBinds ?? []).length > 0) {
      throw new Error('the process driver cannot mount a writable folder');
    }
    const launch = await this.#launch(spec, findExecutable('prlimit') ?? 'prlimit');
    return startLaunch(this.name, launch, spec.limits, spec.wallTimeMs);
  }
}
