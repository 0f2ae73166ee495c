/**
 * @module The `process` driver: a child process under rlimits, in new pid, mount and network
 * namespaces (util-linux unshare) and a fresh scratch. It shares the host's filesystem view, so
 * the sandbox service allows it only for tools that declare pure computation (no data, no
 * egress). What it guarantees: no network at all (a new network namespace with loopback down);
 * no process outlives the run (the run is the init of its own pid namespace, which the kernel
 * empties when it ends; setsid, nohup and double forks do not escape it); no new privileges; and,
 * when toolgate is root, a host uid of its own per run from a configured range, so that its
 * process limit counts its own processes only, and a private size-capped noexec tmpfs as its
 * scratch and /dev/shm.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_SANDBOX_LIMITS } from '../../../domain/catalog/index.js';
import { findExecutable, runningAsRoot } from '../host-tools.js';
import { type Launch, runPrepared, startLaunch } from '../launch.js';
import { prlimitArgv } from '../rlimits.js';
import { driverUnavailable, type RunOutcome } from '../run-outcome.js';
import { type LongLivedSpec, type RunSpec, sandboxEnv } from '../run-spec.js';
import type { DriverProbe, SandboxProcess, SandboxRunner } from '../sandbox-runner.js';
import { type RunUid, RunUidPool, type UidRange, uidRangeFromEnv } from './run-uid-pool.js';

const INSTALL = 'install util-linux (prlimit, setpriv, unshare, mount) and coreutils';

/**
 * The pid namespace's init: runs the tool as its child and exits with its status (128 + signal
 * when killed), never exec'ing it. Were the tool pid 1 itself, the kernel would ignore its
 * SIGXCPU and SIGXFSZ (init gets no default-action signals), and its CPU and file limits would no
 * longer end in their own outcomes. The argv arrives as positional parameters, never interpolated.
 */
const INIT = '"$@"; exit $?';

/**
 * Run as root inside the new mount namespace, before the uid is dropped: mounts the run's scratch,
 * a tmpfs (size-capped, noexec, nosuid, nodev) on the empty host folder `$1`, private to the
 * namespace (the host sees the folder empty), with `tmp` for cwd/HOME/TMPDIR and `shm` bound on
 * /dev/shm, so the host's own /dev/shm (memory, no cap) is out of reach and both draw on one cap.
 * Any failure ends the run before the tool starts.
 */
const SETUP = [
  'set -e',
  // mount and mkdir by the absolute paths toolgate found ($3, $4): this shell is root and runs
  // with the tool's environment, so nothing here is looked up on its PATH.
  '"$3" -t tmpfs -o "size=$2,noexec,nosuid,nodev,mode=0755" toolgate-scratch "$1"',
  '"$4" -m 1777 "$1/tmp" "$1/shm"',
  'if [ -d /dev/shm ]; then "$3" --bind "$1/shm" /dev/shm; fi',
  // cd sets OLDPWD, which would reach the tool's environment: it gets the allow-list only.
  'cd "$1/tmp"',
  'unset OLDPWD',
  'shift 4',
  'exec "$@"',
].join('\n');
const MIB = 1024 * 1024;

interface Tools {
  readonly prlimit: string;
  readonly setpriv: string;
  readonly unshare: string;
  readonly mount: string;
  readonly mkdir: string;
}

function tools(): Tools | null {
  const prlimit = findExecutable('prlimit');
  const setpriv = findExecutable('setpriv');
  const unshare = findExecutable('unshare');
  const mount = findExecutable('mount');
  const mkdir = findExecutable('mkdir');
  return prlimit && setpriv && unshare && mount && mkdir
    ? { prlimit, setpriv, unshare, mount, mkdir }
    : null;
}

export interface ProcessRunnerOptions {
  /** Host uids for runs when toolgate is root; default from TOOLGATE_SANDBOX_UIDS. */
  readonly uids?: UidRange;
}

export class ProcessRunner implements SandboxRunner {
  readonly name = 'process' as const;
  #probe: Promise<DriverProbe> | null = null;
  /** The reason instead, when the configured range is invalid: the driver is then unavailable. */
  readonly #uids: RunUidPool | string;

  constructor(options: ProcessRunnerOptions = {}) {
    let pool: RunUidPool | string;
    try {
      pool = new RunUidPool(options.uids ?? uidRangeFromEnv());
    } catch (err) {
      pool = err instanceof Error ? err.message : String(err);
    }
    this.#uids = pool;
  }

  probe(): Promise<DriverProbe> {
    this.#probe ??= this.#doProbe();
    return this.#probe;
  }

  async #doProbe(): Promise<DriverProbe> {
    const base = { driver: this.name, install: INSTALL };
    const found = tools();
    if (!found) {
      return {
        ...base,
        available: false,
        detail: 'prlimit, setpriv, unshare, mount or mkdir not found',
        notes: [],
      };
    }
    if (typeof this.#uids === 'string') {
      return { ...base, available: false, detail: this.#uids, notes: [] };
    }
    const outcome = await this.#run({ argv: ['true'], limits: DEFAULT_SANDBOX_LIMITS }, found);
    if (outcome.kind !== 'ok') {
      const why = outcome.kind === 'spawn_failed' ? outcome.reason : outcome.stderr.trim();
      return { ...base, available: false, detail: `running true failed: ${why}`, notes: [] };
    }
    const { first, last } = this.#uids.range;
    return {
      ...base,
      available: true,
      detail: `rlimits via ${found.prlimit}, namespaces via ${found.unshare}`,
      notes: [
        'host filesystem visible: pure computation only',
        'no network; no process outlives the run (own pid namespace)',
        ...(runningAsRoot()
          ? [
              `one host uid per run from ${first}-${last}`,
              'scratch and /dev/shm: private tmpfs, size-capped, noexec, nosuid, nodev',
            ]
          : [
              'toolgate is not root: runs share its uid (and its process limit)',
              "toolgate is not root: scratch is a host folder without a size cap, /dev/shm the host's",
            ]),
      ],
    };
  }

  async #launch(spec: RunSpec | LongLivedSpec, found: Tools): Promise<Launch> {
    const root = runningAsRoot();
    let runUid: RunUid | null = null;
    if (root) {
      if (typeof this.#uids === 'string') throw new Error(this.#uids);
      runUid = await this.#uids.acquire();
    }
    let scratch: string;
    try {
      scratch = await mkdtemp(join(tmpdir(), 'toolgate-scratch-'));
    } catch (err) {
      await runUid?.release();
      throw err;
    }
    // With root the scratch is a private tmpfs mounted on this folder (SETUP); without, it is the
    // folder itself, on the host's filesystem, with no size cap but RLIMIT_FSIZE.
    const cwd = root ? join(scratch, 'tmp') : scratch;
    const setup = root
      ? [
          '/bin/sh',
          '-c',
          SETUP,
          'toolgate-setup',
          scratch,
          String(spec.limits.scratch_mb * MIB),
          found.mount,
          found.mkdir,
        ]
      : [];
    // setpriv --pdeathsig: unshare dies with toolgate, and --kill-child takes the namespace's
    // init (and with it every process of the run) along. Without root, a user namespace is what
    // lets unshare make the others.
    const namespaces = [
      found.setpriv,
      '--pdeathsig',
      'KILL',
      '--',
      found.unshare,
      ...(root ? [] : ['--user']),
      '--pid',
      '--fork',
      '--kill-child',
      '--mount-proc',
      '--net',
      // System V shared memory, semaphores and message queues of its own: a segment a run leaves
      // goes with its namespace, and no run reads another's (attack round 18, U3).
      '--ipc',
      '--',
    ];
    // A gid of its own too: the sandbox group (65534) may pass into namespace runs' scratches and
    // staged binds. The uid change clears the parent-death signal: set it again after, so the init still dies
    // with unshare. No new privileges: a setuid binary on the host cannot raise the tool's rights.
    const drop = [
      found.setpriv,
      ...(runUid
        ? ['--reuid', String(runUid.uid), '--regid', String(runUid.uid), '--clear-groups']
        : []),
      '--no-new-privs',
      '--pdeathsig',
      'KILL',
      '--',
    ];
    const argv = [
      ...namespaces,
      ...setup,
      ...drop,
      ...prlimitArgv(spec.limits, found.prlimit),
      '/bin/sh',
      '-c',
      INIT,
      'toolgate-init',
      ...spec.argv,
    ];
    const [command, ...args] = argv as [string, ...string[]];
    return {
      command,
      args,
      env: {
        ...sandboxEnv({ ...(spec.env ? { env: spec.env } : {}) }),
        HOME: cwd,
        TMPDIR: cwd,
      },
      cwd: scratch,
      // Memory: the run's cgroup (memory-cgroup.ts), else its resident memory watched from here.
      watch: { memory: 'resident', cpu: false },
      cleanup: async () => {
        // With root the folder is empty here (its tmpfs went with the mount namespace).
        await rm(scratch, { recursive: true, force: true }).catch(() => undefined);
        // Released after the run: its pid namespace has ended (or, when killed, is ending; the
        // pool passes over a uid whose processes are still there).
        await runUid?.release();
      },
    };
  }

  async #run(spec: RunSpec, found: Tools): Promise<RunOutcome> {
    return runPrepared(
      this.name,
      () => this.#launch(spec, found),
      spec,
      'claim a sandbox uid and scratch',
    );
  }

  async run(spec: RunSpec): Promise<RunOutcome> {
    const probe = await this.probe();
    const found = tools();
    if (!probe.available || !found)
      return driverUnavailable(this.name, probe.detail, probe.install);
    // The host filesystem is visible as it is: a bind can only be honoured at its own path.
    const moved =
      (spec.binds ?? []).some((b) => b.source !== b.target) ||
      (spec.writableBinds ?? []).length > 0;
    if (spec.egressSocket !== undefined || moved) {
      return driverUnavailable(
        this.name,
        'the process driver cannot move files or bridge egress (it has no network and no mounts of its own)',
        'use the namespace or gvisor isolation',
      );
    }
    return this.#run(spec, found);
  }

  async start(spec: LongLivedSpec): Promise<SandboxProcess> {
    const probe = await this.probe();
    const found = tools();
    if (!probe.available || !found) throw new Error(`process driver unavailable: ${probe.detail}`);
    if ((spec.writableBinds ?? []).length > 0) {
      throw new Error('the process driver cannot mount a writable folder');
    }
    const launch = await this.#launch(spec, found);
    return startLaunch(this.name, launch, spec.limits, spec.wallTimeMs);
  }
}
