/**
 * @module Step 13, execute: the call runs in its tool's runtime. Moved whole from the gate (the
 * runtime port will replace the branches below); the result checks that followed are step 14
 * (result.ts). Step order: docs/architecture.md §3.
 */
import type { ToolDefinition } from '../../catalog/index.js';
import { isToolgateError } from '../../core/index.js';
import type { CallCredentials, CredentialBroker } from '../../credentials/index.js';
import {
  type ByteBudget,
  type CommandResult,
  createByteBudget,
  type EgressAuditFields,
  type EgressLease,
  type EgressProxy,
  egressAuditFields,
  type HttpToolRunner,
} from '../../sandbox/index.js';
import { CANCELLED, type CallProgress } from '../call-progress.js';
import type { DenyCode, McpToolResult } from '../decision.js';
import { type IdentityCache, SESSION_CACHE_MAX } from '../identity-cache.js';
import type { InlineExecutor } from '../inline-executor.js';
import type { CompiledTool } from '../tool-cache.js';
import { type CallState, CONTINUE, type StepResult } from './step.js';

/** Runs `command` tools in the isolation they require (src/sandbox's SandboxService). */
export interface CommandSandbox {
  runCommand(
    def: ToolDefinition,
    args: unknown,
    options?: { egressSocket?: string; env?: Readonly<Record<string, string>> },
  ): Promise<CommandResult>;
}

/** Egress for the gate: leases on the proxy for sandboxed tools, and the http runtime. */
export interface GateEgress {
  readonly proxy: Pick<EgressProxy, 'openLease'>;
  readonly http: Pick<HttpToolRunner, 'run'>;
}

/** What an upstream MCP call came to: the upstream's result, or why there is none. */
export type UpstreamCallResult =
  | { readonly ok: true; readonly result: McpToolResult }
  | {
      readonly ok: false;
      readonly code:
        | 'SANDBOX_TIMEOUT'
        | 'SANDBOX_UNAVAILABLE'
        | 'EXECUTION_FAILED'
        | 'EGRESS_DENIED'
        | 'BUDGET_EXCEEDED'
        | 'CALL_CANCELLED';
      readonly rule: string;
      readonly message: string;
    };

/**
 * Forwards an `mcp` tool's call to its upstream provider (src/providers) as tools/call, in the
 * process kept for this gate session. Never throws; never waits past `timeoutMs`.
 */
export interface McpUpstream {
  call(
    def: ToolDefinition,
    args: Record<string, unknown>,
    call: {
      readonly sessionId: string;
      readonly timeoutMs: number;
      /** The session's egress budget for this call: what the upstream connection moves counts. */
      readonly budget?: ByteBudget;
      /** Forwarded as the upstream request's progress token; each upstream report lands here. */
      readonly onProgress?: (progress: CallProgress) => void;
      /** Aborted: the upstream request is cancelled (notifications/cancelled) and CALL_CANCELLED returned. */
      readonly signal?: AbortSignal;
    },
  ): Promise<UpstreamCallResult>;
}

/** What the runtimes need of the gate's services. */
export interface ExecuteDependencies {
  readonly executor: InlineExecutor;
  readonly sandbox: CommandSandbox | undefined;
  readonly egress: GateEgress | undefined;
  readonly credentials: Pick<CredentialBroker, 'forCall'> | undefined;
  readonly upstream: McpUpstream | undefined;
  readonly identities: Pick<IdentityCache, 'egressBudgets'>;
}

/** What the run came to, before the result checks: the raw output and what to scrub from it. */
export type ExecuteRun =
  | ExecuteFailure
  | {
      readonly ok: true;
      readonly output: unknown;
      readonly bytes: number;
      /** The call's credential values: none may reach the caller. */
      readonly redact: readonly string[];
      readonly extra: Partial<ExecuteExtra>;
    };

const NO_SECRETS: readonly string[] = [];

/** Step 13: runs the call (a failure is a result, audited by audit-post, never a refusal). */
export async function executeStep(s: CallState): Promise<StepResult> {
  s.run = await execute(s.deps, s.def, s.callArgs, s.compiled, {
    callId: s.callId,
    sessionId: s.session.id,
    agentId: s.ctx.agentId,
    userId: s.session.user_id,
    destinations: s.destinations,
    egressLimit: s.budgets.egress_bytes,
    storedEgressBytes: s.session.egress_bytes,
    ...(s.options.onProgress ? { onProgress: s.options.onProgress } : {}),
    ...(s.options.signal ? { signal: s.options.signal } : {}),
    egressCeilingLeft: s.egressLeft,
  });
  return CONTINUE;
}

/**
 * The per-session egress budget this process draws on: concurrent calls of one session share
 * it, so together they cannot move more than the ceiling. Other replicas' spending reaches it
 * through the stored counter the next time the session's budget is loaded here.
 */
function egressBudget(
  pools: Map<string, ByteBudget>,
  sessionId: string,
  limit: number | undefined,
  storedSpent: number,
  ceilingLeft = Number.POSITIVE_INFINITY,
): { budget: ByteBudget; spent: () => number } {
  let shared = pools.get(sessionId);
  if (!shared) {
    shared = createByteBudget(
      limit === undefined ? Number.POSITIVE_INFINITY : Math.max(0, limit - storedSpent),
    );
    if (pools.size >= SESSION_CACHE_MAX) {
      const oldest = pools.keys().next();
      if (!oldest.done) pools.delete(oldest.value);
    }
    pools.set(sessionId, shared);
  }
  const pool = shared;
  let mine = 0;
  return {
    budget: {
      remaining: () => Math.min(pool.remaining(), Math.max(0, ceilingLeft - mine)),
      consume: (bytes) => {
        mine += bytes;
        pool.consume(bytes);
      },
    },
    spent: () => mine,
  };
}

/**
 * The tool's credential (only now, after every check passed), the run in its runtime (inline,
 * sandboxed command, http, upstream mcp) with egress only through the proxy's rules. Never
 * throws for anything the tool does; a refusal or failure is a result with its code and rule.
 * What the run returned is checked next, by the result step.
 */
export async function execute(
  d: ExecuteDependencies,
  def: ToolDefinition,
  args: Record<string, unknown>,
  compiled: CompiledTool,
  call: ExecuteCall,
): Promise<ExecuteRun> {
  const failed = (
    code: DenyCode,
    rule: string,
    message: string,
    extra: Partial<ExecuteExtra> = {},
  ): ExecuteFailure => ({ ok: false, code, rule, message, bytes: 0, ...extra });
  // Withdrawn before it started (during the checks, or while an approval was asked): never run.
  if (call.signal?.aborted) {
    return failed(CANCELLED.code, CANCELLED.rule, CANCELLED.message, { outcome: 'cancelled' });
  }

  let creds: CallCredentials | null = null;
  if (def.credentials) {
    if (!d.credentials) {
      return failed(
        'CREDENTIAL_UNAVAILABLE',
        'credentials.unavailable',
        "this gateway cannot provide the tool's credential",
      );
    }
    try {
      creds = await d.credentials.forCall({
        tool: def,
        userId: call.userId,
        agentId: call.agentId,
        sessionId: call.sessionId,
        callId: call.callId,
      });
    } catch (err) {
      if (!isToolgateError(err) || err.code !== 'CREDENTIAL_UNAVAILABLE') throw err;
      // The caller learns that the credential is missing, not which secret or why.
      const reason = (err.details as { reason?: string }).reason ?? 'unavailable';
      return failed(
        'CREDENTIAL_UNAVAILABLE',
        `credentials.${reason}`,
        "the tool's credential is not available; an administrator has to set it",
      );
    }
  }

  const { budget, spent } = egressBudget(
    d.identities.egressBudgets,
    call.sessionId,
    call.egressLimit,
    call.storedEgressBytes,
    call.egressCeilingLeft,
  );
  let output: unknown;
  let outcome: string | undefined;
  let sandbox: SandboxAudit | undefined;
  let egress: EgressAuditFields | undefined;
  const extras = (): Partial<ExecuteExtra> => ({
    ...(sandbox ? { sandbox } : {}),
    ...(egress ? { egress } : {}),
    egressSpent: spent(),
  });

  if (def.runtime.kind === 'command' && d.sandbox) {
    let lease: EgressLease | null = null;
    if (def.sandbox.network === 'egress_proxy' && d.egress) {
      // Constrained tools reach their registered hosts; an unconstrained one only the hosts
      // this call's URL arguments named (checked by the URL policy, shown to any reviewer).
      const allowHosts =
        def.egress.mode === 'constrained' ? [...def.egress.hosts] : [...call.destinations];
      try {
        lease = await d.egress.proxy.openLease({
          leaseId: call.callId,
          sessionId: call.sessionId,
          toolId: def.id,
          allowHosts,
          byteBudget: budget,
          credentials: (creds?.redact ?? []).map((value) => ({
            value,
            audienceHosts: creds?.audience ?? [],
          })),
        });
      } catch {
        // No lease, no route out: the tool does not run rather than run without its proxy.
        return failed(
          'EXECUTION_FAILED',
          'egress.unavailable',
          'the egress proxy could not open a route for this call',
        );
      }
    }
    let ran: CommandResult;
    try {
      ran = await d.sandbox.runCommand(def, args, {
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
    sandbox = run
      ? {
          driver: run.driver,
          outcome: run.kind,
          exit_code: run.exitCode,
          signal: run.signal,
          duration_ms: Math.round(run.durationMs),
          stdout_truncated: run.stdoutTruncated,
          stderr_truncated: run.stderrTruncated,
        }
      : undefined;
    if (!ran.ok) {
      return {
        ok: false,
        code: ran.code,
        rule: ran.rule,
        message: ran.message,
        bytes: run ? Buffer.byteLength(run.stdout, 'utf8') : 0,
        outcome: ran.outcome,
        ...extras(),
      };
    }
    output = ran.output;
    outcome = ran.outcome.kind;
  } else if (def.runtime.kind === 'http' && d.egress) {
    const credential =
      creds && def.credentials?.inject !== 'env' ? Object.values(creds.headers)[0] : undefined;
    const r = await d.egress.http.run(def, args, {
      budget,
      ...(credential !== undefined ? { credential } : {}),
    });
    egress = egressAuditFields(r);
    if (!r.ok) return failed(r.code, r.rule, r.message, { ...extras(), outcome: r.rule });
    output = r.output;
    outcome = 'ok';
  } else if (def.runtime.kind === 'mcp' && d.upstream) {
    const r = await d.upstream.call(def, args, {
      sessionId: call.sessionId,
      timeoutMs: def.sandbox.limits.wall_time_ms,
      budget,
      ...(call.onProgress ? { onProgress: call.onProgress } : {}),
      ...(call.signal ? { signal: call.signal } : {}),
    });
    if (!r.ok) {
      const ended = r.code === CANCELLED.code ? 'cancelled' : r.rule;
      return failed(r.code, r.rule, r.message, { ...extras(), outcome: ended });
    }
    // The upstream's structured content is what its output schema speaks of; a tool error
    // result is passed on as the upstream gave it (the model sees the error), never checked.
    if (r.result.isError !== true && r.result.structuredContent !== undefined) {
      if (!compiled.validateOutput(r.result.structuredContent)) {
        return failed(
          'OUTPUT_INVALID',
          'result.schema',
          'the upstream returned structured content that does not match its output schema',
          extras(),
        );
      }
    }
    output = r.result;
    outcome = r.result.isError === true ? 'tool_error' : 'ok';
  } else {
    if (def.runtime.kind !== 'inline' || !d.executor.has(def.runtime.handler)) {
      // Never run a tool with less isolation than it asks for: no runtime here, no run.
      return failed(
        'EXECUTION_FAILED',
        'runtime.unavailable',
        `the ${def.runtime.kind} runtime is not available on this gateway`,
      );
    }
    try {
      output = await d.executor.run(def.runtime.handler, args);
    } catch {
      return failed('EXECUTION_FAILED', 'execute.error', 'the tool failed');
    }
  }

  return {
    ok: true,
    output,
    bytes: 0,
    redact: creds?.redact ?? NO_SECRETS,
    extra: { ...(outcome ? { outcome } : {}), ...extras() },
  };
}

/** What a sandboxed run adds to its audit record (never its output or stderr). */
export interface SandboxAudit {
  readonly driver: string;
  readonly outcome: string;
  readonly exit_code: number | null;
  readonly signal: string | null;
  readonly duration_ms: number;
  readonly stdout_truncated: boolean;
  readonly stderr_truncated: boolean;
}

/** What a run adds to its audit record beside the decision. */
export interface ExecuteExtra {
  readonly outcome: string;
  readonly sandbox: SandboxAudit;
  readonly egress: EgressAuditFields;
  /** Egress bytes this call charged to the session's budget (persisted after the call). */
  readonly egressSpent: number;
  /** The tool's output held its credential, which was scrubbed. */
  readonly redacted: boolean;
}

export type ExecuteResult = (
  | { ok: true; output: unknown; bytes: number }
  | { ok: false; code: DenyCode; rule: string; message: string; bytes: number }
) &
  Partial<ExecuteExtra>;

export type ExecuteFailure = Extract<ExecuteResult, { ok: false }>;

/** Who and what one execution is for: the credential broker and the egress budget need it. */
export interface ExecuteCall {
  readonly callId: string;
  readonly sessionId: string;
  readonly agentId: string;
  readonly userId: string | null;
  /** Hosts this call's URL arguments named, after the URL policy checked them. */
  readonly destinations: ReadonlySet<string>;
  readonly egressLimit: number | undefined;
  readonly storedEgressBytes: number;
  readonly onProgress?: (progress: CallProgress) => void;
  readonly signal?: AbortSignal;
  /** What the agent's egress ceilings have left (ceilings.ts); this call may move no more. */
  readonly egressCeilingLeft?: number | undefined;
}
