/**
 * @module The tool-runtime port (docs/architecture.md §4): what the gate's execute step hands a
 * runtime once every check passed and the audit pre-record is durable, and what a runtime hands
 * back. One implementation per `runtime.kind` (inline, command, http, mcp); the gate looks the
 * runtime up by kind and knows nothing of how it runs a tool.
 */

import type { CallProgress, ErrorCode } from '../../core/index.js';
import type { ToolDefinition } from '../../domain/catalog/index.js';
import type { CallCredentials } from '../../domain/credentials/index.js';
import type { ByteBudget, EgressAuditFields } from '../sandbox/index.js';

export type RuntimeKind = ToolDefinition['runtime']['kind'];

/**
 * Everything the gate resolved for this call that a runtime may use. Built once per call; a
 * runtime reads it and never keeps it past the call.
 */
export interface RuntimeContext {
  readonly callId: string;
  readonly sessionId: string;
  readonly agentId: string;
  readonly userId: string | null;
  /**
   * The tool's own credential, opened by the broker only after every check passed; null when the
   * tool declares none. A runtime sends it only where the definition says (a header, the
   * environment) and never puts it into a result: scrubbing what a tool echoes is the gate's
   * result step, which has the same values (`redact`).
   */
  readonly credentials: CallCredentials | null;
  /** The session's egress budget for this call: every byte a runtime moves is charged here. */
  readonly budget: ByteBudget;
  /**
   * Hosts the call's URL arguments named, after the URL policy checked them. What the call may
   * reach is `reachableHosts(def, destinations)`: a constrained tool's registered hosts, else these.
   */
  readonly destinations: ReadonlySet<string>;
  /** The tool's wall time (`sandbox.limits.wall_time_ms`): no run lasts longer. */
  readonly wallTimeMs: number;
  /**
   * The tool's compiled output schema. The gate checks every result but an upstream MCP tool's,
   * whose structured content (not the whole result) is what its schema speaks of.
   */
  readonly validateOutput: (value: unknown) => boolean;
  /**
   * The capabilities the call's OAuth token covers, which narrow its session on this request
   * (the built-in discovery tool finds only those); absent for any other caller.
   */
  readonly tokenCapabilities?: readonly string[];
  /** Receives an upstream MCP tool's progress while it runs (never after the call returned). */
  readonly onProgress?: (progress: CallProgress) => void;
  /** Withdraws the call: an upstream MCP call is cancelled upstream. */
  readonly signal?: AbortSignal;
  /**
   * A traced call's W3C `traceparent` for the upstream (an MCP server's request `_meta`, an HTTP
   * tool's header); absent when tracing is off. Never the caller's own `tracestate`.
   */
  readonly traceparent?: string;
}

/** Codes a runtime may answer with: each a code of the one error catalogue (docs/architecture.md §7). */
export type RuntimeFailureCode = Extract<
  ErrorCode,
  | 'EXECUTION_FAILED'
  | 'SANDBOX_UNAVAILABLE'
  | 'SANDBOX_TIMEOUT'
  | 'SANDBOX_LIMIT'
  | 'EGRESS_DENIED'
  | 'BUDGET_EXCEEDED'
  | 'INPUT_INVALID'
  | 'OUTPUT_INVALID'
  | 'CALL_CANCELLED'
>;

/** What a sandboxed run adds to its audit record (never its output or stderr). */
export interface SandboxAudit {
  readonly driver: string;
  readonly outcome: string;
  readonly exit_code: number | null;
  readonly signal: string | null;
  readonly duration_ms: number;
  readonly stdout_truncated: boolean;
  readonly stderr_truncated: boolean;
  /** How the run's memory was held: `cgroup-v2`, `cgroup-v1` or `rlimit-watch` (no kernel limit). */
  readonly memory?: string;
  /** With a cgroup, the most memory the run held at once, in MB. */
  readonly memory_peak_mb?: number;
}

/** What a run adds to the call's audit record beside its result. */
export interface RuntimeAudit {
  /**
   * How the run ended, for the record's `outcome` (e.g. `ok`, `timeout`, `cancelled`, a rule);
   * absent, the record says `ok` or the failure's rule.
   */
  readonly outcome?: string;
  readonly sandbox?: SandboxAudit;
  readonly egress?: EgressAuditFields;
}

export interface RuntimeSuccess extends RuntimeAudit {
  readonly ok: true;
  readonly output: unknown;
}

/**
 * A run that came to no result. Distinct causes are distinct rules (and outcomes): a timeout is
 * not a crash, a refused egress is not bad output.
 */
export interface RuntimeFailure<C extends ErrorCode = RuntimeFailureCode> extends RuntimeAudit {
  readonly ok: false;
  readonly code: C;
  readonly rule: string;
  readonly message: string;
  /** Bytes of output the run produced before it failed (0 when none), for the record. */
  readonly bytes: number;
}

export type RuntimeResult = RuntimeSuccess | RuntimeFailure;

/**
 * Runs one kind of tool. `run` never throws for anything the tool does (crash, hang, bad output,
 * refused egress): every such end is a `RuntimeFailure` with its code and rule. It never runs a
 * tool with less isolation than the definition asks for.
 */
export interface ToolRuntime {
  readonly kind: RuntimeKind;
  run(
    def: ToolDefinition,
    args: Record<string, unknown>,
    context: RuntimeContext,
  ): Promise<RuntimeResult>;
}

/** The runtimes of one gateway by kind; a kind without one is refused (never run weaker). */
export type RuntimeRegistry = Readonly<Partial<Record<RuntimeKind, ToolRuntime>>>;

/** A failure with no output and no audit extras. */
export function runtimeFailure<C extends ErrorCode = RuntimeFailureCode>(
  code: C,
  rule: string,
  message: string,
  audit?: RuntimeAudit,
): RuntimeFailure<C> {
  return audit === undefined
    ? { ok: false, code, rule, message, bytes: 0 }
    : { ok: false, code, rule, message, bytes: 0, ...audit };
}

/**
 * The hosts one call may reach: a constrained tool its registered hosts; an unconstrained one only
 * the hosts its URL arguments named (checked by the URL policy, shown to any reviewer).
 */
export function reachableHosts(
  def: ToolDefinition,
  destinations: ReadonlySet<string>,
): readonly string[] {
  return def.egress.mode === 'constrained' ? [...def.egress.hosts] : [...destinations];
}

/** Builds a registry from runtimes, one per kind (a second of a kind is a wiring mistake). */
export function runtimeRegistry(...runtimes: readonly ToolRuntime[]): RuntimeRegistry {
  const map: Partial<Record<RuntimeKind, ToolRuntime>> = {};
  for (const runtime of runtimes) {
    if (map[runtime.kind]) throw new Error(`two ${runtime.kind} runtimes`);
    map[runtime.kind] = runtime;
  }
  return map;
}
