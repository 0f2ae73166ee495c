/**
 * @module The sandbox service wired into the gate: one runner per driver, probed once, the
 * `command` runtime, long-lived processes for `mcp-stdio`, and the driver report for
 * `toolgate doctor`. It never substitutes a weaker driver for the one a tool asks for.
 */
import type { ToolDefinition } from '../../domain/catalog/index.js';
import { type CommandResult, interpretRun, planCommand } from './command-runtime.js';
import { GVISOR_MACHINERY_MB, GvisorRunner } from './gvisor/gvisor-runner.js';
import { memoryEnforcement } from './memory-cgroup.js';
import { NamespaceRunner } from './namespace/namespace-runner.js';
import { ProcessRunner } from './process/process-runner.js';
import { ProtectedPaths } from './protected-paths.js';
import { DRIVER_NAMES, type DriverName, type LongLivedSpec } from './run-spec.js';
import type { DriverProbe, SandboxProcess, SandboxRunner } from './sandbox-runner.js';

export interface CommandRunOptions {
  /** Host path of the egress proxy's socket for this call, when the tool declares egress. */
  readonly egressSocket?: string;
  /** Extra environment for the tool (e.g. an injected credential); nothing else is passed. */
  readonly env?: Readonly<Record<string, string>>;
}

export class SandboxService {
  readonly #runners: Readonly<Record<DriverName, SandboxRunner>>;
  /**
   * Host paths no run may see (toolgate's data folder, the database files): checked before every
   * run, whatever was registered, so a definition or provider spec that names them never starts.
   */
  readonly protectedPaths = new ProtectedPaths();

  constructor(runners: Partial<Record<DriverName, SandboxRunner>> = {}) {
    this.#runners = {
      process: runners.process ?? new ProcessRunner(),
      namespace: runners.namespace ?? new NamespaceRunner(),
      gvisor: runners.gvisor ?? new GvisorRunner(),
    };
  }

  runner(name: DriverName): SandboxRunner {
    return this.#runners[name];
  }

  /** Every driver's probe (each runs `true` once per process, then is cached). */
  async doctor(): Promise<DriverProbe[]> {
    const probes = await Promise.all(DRIVER_NAMES.map((d) => this.#runners[d].probe()));
    // Which mechanism holds runs' memory here: a kernel limit per run, or only rlimit and watch.
    const memory = memoryEnforcement();
    return probes.map((p) => {
      if (!p.available) return p;
      const extra =
        p.driver === 'gvisor' && memory.enforcement !== 'rlimit-watch'
          ? ` (plus ${GVISOR_MACHINERY_MB} MB for gVisor itself; the tool's pages are watched against memory_mb)`
          : '';
      return { ...p, notes: [...p.notes, `${memory.note}${extra}`] };
    });
  }

  /** Runs a `command` tool; never throws (refusals and failures are results). */
  async runCommand(
    def: ToolDefinition,
    args: unknown,
    options: CommandRunOptions = {},
  ): Promise<CommandResult> {
    const plan = planCommand(def, args, options);
    if (!plan.ok) return plan;
    if (this.protectedPaths.exposedByRun(plan.spec) !== null) {
      // The caller (an agent) is not told which host path: only that the tool was not run.
      return {
        ok: false,
        code: 'EXECUTION_FAILED',
        rule: 'sandbox.data_folder',
        message: "the tool's files or folders include toolgate's data folder; it is not run",
        outcome: 'sandbox.data_folder',
      };
    }
    return interpretRun(await this.#runners[plan.driver].run(plan.spec));
  }

  /** Starts a long-lived process (an MCP stdio server) in the named driver. */
  async start(driver: DriverName, spec: LongLivedSpec): Promise<SandboxProcess> {
    if (this.protectedPaths.exposedByRun(spec) !== null) {
      throw new Error(
        "refused: the command, binds or workspace include toolgate's data folder or database",
      );
    }
    return this.#runners[driver].start(spec);
  }
}
