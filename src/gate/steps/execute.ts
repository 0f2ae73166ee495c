/**
 * @module The `execute` step: the tool's credential is opened, then the call runs in the runtime of
 * its kind, looked up in the gate's registry (docs/architecture.md §4); the result checks that
 * follow are step `result` (result.ts). Step order: docs/architecture.md §3.
 */

import { isToolgateError, type Mutable } from '../../core/index.js';
import type { ToolDefinition } from '../../domain/catalog/index.js';
import type { CallCredentials, CredentialBroker } from '../../domain/credentials/index.js';
import { callInFlight, tokenCapabilities } from '../../domain/sessions/index.js';
import {
  type RuntimeContext,
  type RuntimeRegistry,
  type RuntimeResult,
  runtimeFailure,
  type ToolRuntime,
} from '../../execution/runtimes/index.js';
import { type ByteBudget, createByteBudget } from '../../execution/sandbox/index.js';
import { interruptedRecord } from '../audit-records.js';
import { CANCELLED, type CallProgress } from '../call-progress.js';
import type { CallSpan, ChildSpan } from '../call-tracer.js';
import { type IdentityCache, SESSION_CACHE_MAX } from '../identity-cache.js';
import { runningOf } from '../running-calls.js';
import type { CompiledTool } from '../tool-cache.js';
import type { ExecuteExtra, ExecuteFailure, ExecuteRun } from './run-result.js';
import { type CallState, CONTINUE, healthCaller, type StepResult } from './step.js';

/** What the runtimes need of the gate's services. */
export interface ExecuteDependencies {
  /** One runtime per kind; a kind without one is refused (runtime.unavailable). */
  readonly runtimes: RuntimeRegistry;
  readonly credentials: Pick<CredentialBroker, 'forCall'> | undefined;
  readonly identities: Pick<IdentityCache, 'egressBudgets'>;
}

const NO_SECRETS: readonly string[] = [];
const STOPPING = 'the gateway is stopping; the call did not run, send it again once it answers';

/** The `execute` step: runs the call (a failure is a result, audited by audit-post, never a refusal). */
export async function executeStep(s: CallState): Promise<StepResult> {
  s.runStarted = true;
  // The gateway is stopping (running-calls.ts): nothing starts any more; audit-post records it.
  const running = runningOf(s.deps);
  if (running.stopped) {
    s.run = notRun(runtimeFailure('SHUTTING_DOWN', 'gateway.shutdown', STOPPING));
    return CONTINUE;
  }
  running.enter(s, () => s.deps.audit.append(interruptedRecord(s), undefined, { hosts: s.hosts }));
  const started = performance.now();
  // A session with a call running here is never ended for fairness (agent-caps.ts).
  const ended = callInFlight(s.session.id);
  s.run = await execute(s.deps, s.def, s.callArgs, s.compiled, {
    callId: s.callId,
    sessionId: s.session.id,
    agentId: s.ctx.principal.agentId,
    userId: s.session.user_id,
    credential: s.session.credential,
    destinations: s.destinations,
    egressLimit: s.budgets.egress_bytes,
    storedEgressBytes: s.session.egress_bytes,
    ...(s.options.onProgress ? { onProgress: s.options.onProgress } : {}),
    ...(s.options.signal ? { signal: s.options.signal } : {}),
    egressCeilingLeft: s.egressLeft,
    tokenCapabilities: tokenCapabilities(s.ctx.principal),
    ...(s.span && UPSTREAM_KINDS.has(s.def.runtime.kind)
      ? { upstream: upstreamSpan(s, s.span) }
      : {}),
  }).finally(() => {
    running.leave(s);
    ended();
  });
  // Passive health (C14): the tool's own outcome, recorded in memory without holding the call.
  if (s.ref && countsForHealth(s.run))
    s.deps.health.observe(
      s.ref.id,
      s.ref.version,
      s.run.ok,
      performance.now() - started,
      healthCaller(s),
    );
  return CONTINUE;
}

/** A cancelled call or a spent budget says nothing about the tool's health. */
function countsForHealth(run: ExecuteRun): boolean {
  return run.ok || (run.code !== 'CALL_CANCELLED' && run.code !== 'BUDGET_EXCEEDED');
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
 * The tool's credential (only now, after every check passed), then the run in the runtime of its
 * kind (docs/architecture.md §4), with egress only through the proxy's rules. Never throws for
 * anything the tool does; a refusal or failure is a result with its code and rule. What the run
 * returned is checked next, by the result step.
 */
export async function execute(
  d: ExecuteDependencies,
  def: ToolDefinition,
  args: Record<string, unknown>,
  compiled: CompiledTool,
  call: ExecuteCall,
): Promise<ExecuteRun> {
  // Withdrawn before it started (during the checks, or while an approval was asked): never run.
  if (call.signal?.aborted) {
    return notRun(
      runtimeFailure(CANCELLED.code, CANCELLED.rule, CANCELLED.message, {
        outcome: 'cancelled',
      }),
    );
  }

  let creds: CallCredentials | null = null;
  if (def.credentials) {
    if (!d.credentials) {
      return notRun(
        runtimeFailure(
          'CREDENTIAL_UNAVAILABLE',
          'credentials.unavailable',
          "this gateway cannot provide the tool's credential",
        ),
      );
    }
    try {
      creds = await d.credentials.forCall({
        tool: def,
        userId: call.userId,
        agentId: call.agentId,
        sessionId: call.sessionId,
        callId: call.callId,
        credential: call.credential ?? null,
      });
    } catch (err) {
      if (!isToolgateError(err) || err.code !== 'CREDENTIAL_UNAVAILABLE') throw err;
      // The caller learns that the credential is missing, not which secret or why.
      const reason = (err.details as { reason?: string }).reason ?? 'unavailable';
      return notRun(
        runtimeFailure(
          'CREDENTIAL_UNAVAILABLE',
          `credentials.${reason}`,
          reason === 'exchange_foreign_issuer'
            ? "this tool's upstream token is exchanged only for access tokens of its own authorization server, and this session's token is of another issuer"
            : "the tool's credential is not available; an administrator has to set it",
        ),
      );
    }
  }

  const runtime = d.runtimes[def.runtime.kind];
  if (!runtime) {
    // Never run a tool with less isolation than it asks for: no runtime here, no run.
    return notRun(
      runtimeFailure(
        'EXECUTION_FAILED',
        'runtime.unavailable',
        `the ${def.runtime.kind} runtime is not available on this gateway`,
      ),
    );
  }
  const { budget, spent } = egressBudget(
    d.identities.egressBudgets,
    call.sessionId,
    call.egressLimit,
    call.storedEgressBytes,
    call.egressCeilingLeft,
  );
  const context: Mutable<RuntimeContext> = {
    callId: call.callId,
    sessionId: call.sessionId,
    agentId: call.agentId,
    userId: call.userId,
    credentials: creds,
    budget,
    destinations: call.destinations,
    wallTimeMs: def.sandbox.limits.wall_time_ms,
    validateOutput: compiled.validateOutput,
  };
  if (call.tokenCapabilities) context.tokenCapabilities = call.tokenCapabilities;
  if (call.onProgress) context.onProgress = call.onProgress;
  if (call.signal) context.signal = call.signal;
  const ran = await runGuarded(runtime, def, args, context, call.upstream);
  if (!ran.ok) return { ...ran, egressSpent: spent() };
  const extra: Mutable<Partial<ExecuteExtra>> = { egressSpent: spent() };
  if (ran.outcome !== undefined) extra.outcome = ran.outcome;
  if (ran.sandbox) extra.sandbox = ran.sandbox;
  if (ran.egress) extra.egress = ran.egress;
  return { ok: true, output: ran.output, bytes: 0, redact: creds?.redact ?? NO_SECRETS, extra };
}

/**
 * The runtime's run, traced when `upstream` opens the client span of its request (the upstream
 * is sent that span's context). The port's rule is that a runtime never throws; one that does (a
 * driver's own bug) ends the call as a failure that audit-post records, never as an error past
 * the pre record.
 */
async function runGuarded(
  runtime: ToolRuntime,
  def: ToolDefinition,
  args: Record<string, unknown>,
  context: Mutable<RuntimeContext>,
  upstream: (() => ChildSpan) | undefined,
): Promise<RuntimeResult> {
  const span = upstream?.() ?? null;
  if (span) context.traceparent = span.traceparent;
  let ran: RuntimeResult;
  try {
    ran = await runtime.run(def, args, context);
  } catch {
    ran = runtimeFailure('EXECUTION_FAILED', 'runtime.error', 'the tool could not be run');
  }
  span?.end(ran.ok ? undefined : ran.rule);
  return ran;
}

/** A failure before the runtime was reached: nothing ran, so an idempotency key is given back. */
function notRun(failure: ExecuteFailure): ExecuteFailure {
  return { ...failure, notRun: true };
}

/** Who and what one execution is for: the credential broker and the egress budget need it. */
export interface ExecuteCall {
  readonly callId: string;
  readonly sessionId: string;
  readonly agentId: string;
  readonly userId: string | null;
  /** The session's credential: a token exchange uses the subject token it presented. */
  readonly credential?: string | null;
  /** Hosts this call's URL arguments named, after the URL policy checked them. */
  readonly destinations: ReadonlySet<string>;
  readonly egressLimit: number | undefined;
  readonly storedEgressBytes: number;
  readonly onProgress?: (progress: CallProgress) => void;
  readonly signal?: AbortSignal;
  /** What the agent's egress ceilings have left (ceilings.ts); this call may move no more. */
  readonly egressCeilingLeft?: number | undefined;
  /** The capabilities the call's OAuth token covers; null for any other caller. */
  readonly tokenCapabilities?: readonly string[] | null;
  /** Traced calls to an upstream (mcp, http): opens the client span of the upstream call. */
  readonly upstream?: () => ChildSpan;
}

/** The runtimes whose run is a request to an upstream: their context is passed on. */
const UPSTREAM_KINDS: ReadonlySet<string> = new Set(['mcp', 'http']);

/**
 * The client span of a traced call to an upstream, under the execute step's span: for an MCP
 * upstream `tools/call {its tool}` (the MCP conventions' client span), for an HTTP tool its
 * method (the HTTP client conventions' name without a route). No argument reaches it.
 */
function upstreamSpan(s: CallState, span: CallSpan): () => ChildSpan {
  const runtime = s.def.runtime;
  if (runtime.kind !== 'mcp') {
    const method = runtime.kind === 'http' ? runtime.method : runtime.kind;
    return () => span.upstream(s.stepSpan, method, { 'http.request.method': method });
  }
  const entry = runtime.entry?.kind;
  const mcpMethod = !entry ? 'tools/call' : entry === 'prompt' ? 'prompts/get' : 'resources/read';
  const attributes: Record<string, string> = { 'mcp.method.name': mcpMethod };
  attributes[entry === 'prompt' ? 'gen_ai.prompt.name' : 'gen_ai.tool.name'] = runtime.tool;
  return () => span.upstream(s.stepSpan, `${mcpMethod} ${runtime.tool}`, attributes);
}
