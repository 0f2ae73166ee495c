/**
 * @module The `command` runtime (docs/architecture.md §4): a tool's own program run in the sandbox
 * driver its definition names, reaching the network only through an egress lease on the proxy
 * (the call's reachable hosts, its byte budget, its credential's audience). No lease, no run: a
 * tool that needs the proxy never runs without it.
 */
import type { ToolDefinition } from '../../../domain/catalog/index.js';
import {
  type CommandResult,
  type CommandRunOptions,
  type EgressAuditFields,
  type EgressLease,
  type EgressProxy,
  egressAuditFields,
} from '../../sandbox/index.js';
import {
  type RuntimeContext,
  type RuntimeResult,
  reachableHosts,
  runtimeFailure,
  type SandboxAudit,
  type ToolRuntime,
} from '../tool-runtime.js';

/** Runs `command` tools in the isolation they require (the sandbox's SandboxService). */
export interface CommandSandbox {
  runCommand(
    def: ToolDefinition,
    args: unknown,
    options?: CommandRunOptions,
  ): Promise<CommandResult>;
}

export class CommandRuntime implements ToolRuntime {
  readonly kind = 'command';
  readonly #sandbox: CommandSandbox;
  readonly #proxy: Pick<EgressProxy, 'openLease'> | undefined;

  /** Without a proxy, tools that declare `network: egress_proxy` are refused by the sandbox. */
  constructor(sandbox: CommandSandbox, proxy?: Pick<EgressProxy, 'openLease'>) {
    this.#sandbox = sandbox;
    this.#proxy = proxy;
  }

  async run(
    def: ToolDefinition,
    args: Record<string, unknown>,
    context: RuntimeContext,
  ): Promise<RuntimeResult> {
    const creds = context.credentials;
    let lease: EgressLease | null = null;
    if (def.sandbox.network === 'egress_proxy' && this.#proxy) {
      try {
        lease = await this.#proxy.openLease({
          leaseId: context.callId,
          sessionId: context.sessionId,
          toolId: def.id,
          allowHosts: reachableHosts(def, context.destinations),
          byteBudget: context.budget,
          credentials: (creds?.redact ?? []).map((value) => ({
            value,
            audienceHosts: creds?.audience ?? [],
          })),
        });
      } catch {
        // No lease, no route out: the tool does not run rather than run without its proxy.
        return runtimeFailure(
          'EXECUTION_FAILED',
          'egress.unavailable',
          'the egress proxy could not open a route for this call',
        );
      }
    }
    let ran: CommandResult;
    let egress: EgressAuditFields | undefined;
    try {
      ran = await this.#sandbox.runCommand(def, args, {
        ...(lease ? { egressSocket: lease.socketPath } : {}),
        ...(creds ? { env: creds.env } : {}),
      });
    } finally {
      if (lease) {
        egress = egressAuditFields(lease.stats());
        await lease.close();
      }
    }
    const run = ran.ok ? ran.outcome : ran.run;
    const sandbox: SandboxAudit | undefined = run
      ? {
          driver: run.driver,
          outcome: run.kind,
          exit_code: run.exitCode,
          signal: run.signal,
          duration_ms: Math.round(run.durationMs),
          stdout_truncated: run.stdoutTruncated,
          stderr_truncated: run.stderrTruncated,
          ...(run.memory ? { memory: run.memory.enforcement } : {}),
          ...(run.memory?.peakMb != null ? { memory_peak_mb: run.memory.peakMb } : {}),
        }
      : undefined;
    const audit = { ...(sandbox ? { sandbox } : {}), ...(egress ? { egress } : {}) };
    if (!ran.ok) {
      return {
        ok: false,
        code: ran.code,
        rule: ran.rule,
        message: ran.message,
        bytes: run ? Buffer.byteLength(run.stdout, 'utf8') : 0,
        outcome: ran.outcome,
        ...audit,
      };
    }
    return { ok: true, output: ran.output, outcome: ran.outcome.kind, ...audit };
  }
}
