/**
 * @module The MCP server for 2026-07-28 (stateless) requests, on the v2 SDK (C15,
 * docs/architecture.md §6). Instances are built once and serve request after request (HTTP: a
 * few, reused — server-pool.ts; stdio: one per connection); each request's principal comes with
 * the request, never from the instance. There is no MCP session: the gate session is a run whose
 * handle the client carries in `_meta["io.toolgate/run"]`; a request without one gets a run, and
 * its handle comes back in the result's `_meta`. tools/list is the run's permitted set, sorted by
 * name, with `cacheScope: private` and a short `ttlMs`; tools/call goes through the gate (a call
 * that waits for approval held open each round for its decision: approval-hold.ts). Roots,
 * sampling and logging (deprecated by the revision) are neither used nor advertised.
 */
import {
  type CallToolRequest,
  type CallToolResult,
  type InputRequiredResult,
  ProtocolError,
  Server,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';
import type { AgentApi, GateDecision } from '../../api/index.js';
import {
  type AgentPrincipal,
  ERROR_CODES,
  type ErrorCode,
  type ErrorDetails,
  isToolgateError,
  type RequestStateRefusal,
  ToolgateError,
} from '../../core/index.js';
import {
  DEFAULT_APPROVAL_WAIT_MS,
  heldApproval,
  holdForApproval,
  holdOf,
} from './approval-hold.js';
import { approvalInputRequired, boundApprovalOf, canElicit } from './approval-input.js';
import { toolCall } from './gate-call.js';

import type { ModernCaller, RequestCaller } from './modern-caller.js';
import { registerModernEntryHandlers } from './modern-entries.js';
import { failureFor, rpcErrorOf, toolResult } from './result-shape.js';
import { RUN_META_KEY, type RunResolver } from './run-meta.js';

/** The protocol revision this server speaks (the trace's `mcp.protocol.version`). */
const MODERN_PROTOCOL = '2026-07-28';

export interface ModernServerOptions {
  readonly version: string;
  /** How long a client may reuse a tools/list result (`ttlMs`). */
  readonly listTtlMs: number;
  readonly onError?: (err: unknown) => void;
  /** Told of each echoed `requestState` refused before the gate (forged, expired, someone else's). */
  readonly onRefusedState?: (err: ToolgateError) => Promise<void>;
  /**
   * How long one round of a call that waits for approval is held open for its decision
   * (approval-hold.ts); 0 answers at once. Default DEFAULT_APPROVAL_WAIT_MS.
   */
  readonly approvalWaitMs?: number;
}

/** A protocol error for a refused run or header, with its catalogue number and body. */
export function protocolError(err: ToolgateError): ProtocolError {
  const e = rpcErrorOf(err);
  return new ProtocolError(e.code, e.message, e.data);
}

function handleOf(meta: unknown): string | undefined {
  const value = (meta as Record<string, unknown> | undefined)?.[RUN_META_KEY];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The v2 server for modern requests. It is built once and serves request after request: the
 * caller of each is `callerOf(ctx)` (HTTP: the principal this front authenticated for the
 * request; stdio: the connection's one principal), never anything the instance remembers.
 * `hold` (HTTP) is told when a handler starts and gives it back when the handler ends, so an
 * instance is handed to another request only once nothing of the last one can still reach it.
 */
export type { ModernCaller, RequestCaller } from './modern-caller.js';

export function createModernServer(
  agent: AgentApi,
  callerOf: (ctx: ServerContext) => ModernCaller,
  options: ModernServerOptions & { readonly hold?: (server: Server) => () => void },
): Server {
  const server = new Server(
    { name: 'toolgate', version: options.version },
    {
      // Resources and prompts always advertised, their lists empty when nothing is granted
      // (modern-entries.ts); a read is gated per request, so never cached beyond it.
      capabilities: {
        tools: { listChanged: true },
        resources: { listChanged: true },
        prompts: { listChanged: true },
      },
      cacheHints: {
        'tools/list': { ttlMs: options.listTtlMs, cacheScope: 'private' },
        'resources/list': { ttlMs: options.listTtlMs, cacheScope: 'private' },
        'resources/templates/list': { ttlMs: options.listTtlMs, cacheScope: 'private' },
        'prompts/list': { ttlMs: options.listTtlMs, cacheScope: 'private' },
        'resources/read': { ttlMs: 0, cacheScope: 'private' },
      },
      instructions:
        'toolgate governs these tools. A result with isError and a code (for example ' +
        'APPROVAL_REQUIRED or POLICY_DENIED) is a decision, not a fault: report it to the user. ' +
        `Carry _meta["${RUN_META_KEY}"] from a result on every later request of the same task.`,
    },
  );
  const callerFor = (ctx: ServerContext): RequestCaller => {
    const modernCaller = callerOf(ctx);
    const { principal, runs } = modernCaller;
    // The gate binds runs to the principal as the authenticator built it.
    const who = principal;
    const refused = async (handle: string, err: unknown): Promise<never> => {
      if (isToolgateError(err) && err.code === 'SESSION_NOT_FOUND') {
        runs.forget(handle);
        throw protocolError(await agent.runs.refusal(handle, who));
      }
      throw err;
    };
    return { ...modernCaller, who, refused };
  };
  /** Runs one handler with the instance held for it (never handed to another request meanwhile). */
  const held = async <T>(ctx: ServerContext, work: (caller: RequestCaller) => Promise<T>) => {
    const release = options.hold?.(server);
    try {
      // An exchange that ended before its handler started: nothing may be sent for it.
      if (ctx.mcpReq.signal.aborted)
        throw new ProtocolError(ERROR_CODES.INTERNAL.jsonRpc, 'closed');
      return await work(callerFor(ctx));
    } catch (err) {
      // A credential that no longer holds (stdio proves it on every request) keeps its code, and
      // so does a run refused because the agent or its user holds every session slot allowed.
      if (isToolgateError(err) && (err.code === 'UNAUTHENTICATED' || err.code === 'LIMIT_REACHED'))
        throw protocolError(err);
      throw err;
    } finally {
      release?.();
    }
  };

  registerModernEntryHandlers(server, {
    agent,
    held,
    ...(options.onError ? { onError: options.onError } : {}),
  });
  server.setRequestHandler('tools/list', (request, ctx: ServerContext) =>
    held(ctx, async ({ runs, who, refused }) => {
      const run = await runs.resolve(handleOf(request.params?._meta));
      // A run follows grant and catalog changes as an MCP session does, at the client's next list.
      await agent.sessions
        .refresh(run.handle, who)
        .catch((err: unknown) => refused(run.handle, err));
      const tools = (await agent.sessions
        .exportTools(run.handle, who, 'mcp')
        .catch((err: unknown) => refused(run.handle, err))) as Tool[];
      // Deterministic: the same set lists the same way, whatever order the catalog returned.
      tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      return { tools, _meta: { [RUN_META_KEY]: run.handle } };
    }),
  );
  server.setRequestHandler('tools/call', (request, ctx: ServerContext) =>
    held(ctx, (caller) => callTool(agent, caller, request.params, ctx, options)),
  );
  return server;
}

/**
 * Rounds of an approval's multi round-trip request before toolgate answers a call that still
 * waits as a tool result (APPROVAL_REQUIRED, the approval id and where it is decided) instead of
 * another `input_required`: the official SDK clients give up after their tenth round with an
 * error that names no approval (`inputRequired.maxRounds`, `input_required_max_rounds`), so the
 * tenth retry gets an answer the agent can report and act on — call again with the same
 * arguments, which finds the same approval.
 */
const MAX_APPROVAL_ROUNDS = 10;

/** tools/call of one request: the gate's decision, a pending one as an input-required result. */
async function callTool(
  agent: AgentApi,
  caller: RequestCaller,
  params: CallToolRequest['params'],
  ctx: ServerContext,
  options: ModernServerOptions,
): Promise<CallToolResult | InputRequiredResult> {
  const { principal, runs, who, refused } = caller;
  const handle = handleOf(params._meta);
  // A retry of a call that waited for approval echoes its sealed state: it names the approval
  // (and the run) this call may use, and nothing else (docs/architecture.md §6).
  const echoed = ctx.mcpReq.requestState<unknown>();
  let bound: ReturnType<typeof boundApprovalOf> | undefined;
  if (echoed !== undefined) {
    try {
      bound = boundApprovalOf(agent, String(echoed), principal, handle);
    } catch (err) {
      if (!isToolgateError(err)) throw err;
      // Recorded before the answer: the refusal is in the log when the client learns of it.
      await options.onRefusedState?.(err);
      throw protocolError(err);
    }
  }
  const run = await runs.resolve(bound?.run ?? handle);
  const ctxOfCall = {
    principal: who,
    sessionId: run.handle,
    // Over HTTP: the request's Mcp-Param-* headers, for the gate's `headers` step to compare.
    ...(caller.paramHeaders ? { mcpParamHeaders: caller.paramHeaders } : {}),
  };
  const call = toolCall(agent, ctxOfCall, params, {
    signal: ctx.mcpReq.signal,
    notify: ctx.mcpReq.notify,
    origin: {
      transport: caller.paramHeaders ? 'tcp' : 'pipe',
      traceparent: caller.traceparent,
      protocolVersion: MODERN_PROTOCOL,
      jsonrpcId: ctx.mcpReq.id,
    },
    ...(bound ? { boundApproval: bound.approval } : {}),
  });
  const elicit = canElicit(ctx.mcpReq.envelope);
  let result: CallToolResult | InputRequiredResult;
  try {
    let decision = await call.invoke();
    // Held until a person decides, within the bound (approval-hold.ts); a client that can show
    // the person where to decide is told on its first round first, held from its second.
    if (decision.kind === 'pending_approval' && (bound !== undefined || !elicit)) {
      const pending = decision;
      const waitMs = options.approvalWaitMs ?? DEFAULT_APPROVAL_WAIT_MS;
      const hold = holdOf({ waitMs, standBy: caller.standBy }, params._meta);
      const io = { signal: ctx.mcpReq.signal, call };
      if (await holdForApproval(agent, ctxOfCall, pending, hold, io)) {
        decision = await call.invoke(bound ? bound.approval : heldApproval(pending));
      }
    }
    await call.flush();
    refuseAsProtocolError(decision);
    const round = (bound?.round ?? 0) + 1;
    result =
      decision.kind === 'pending_approval' && round <= MAX_APPROVAL_ROUNDS
        ? approvalInputRequired(agent, decision, principal, run.handle, {
            firstRound: bound === undefined,
            elicit,
            round,
          })
        : (toolResult(decision) as CallToolResult);
  } catch (err) {
    if (err instanceof ProtocolError) throw err;
    if (isToolgateError(err) && err.code === 'SESSION_NOT_FOUND') return refused(run.handle, err);
    result = failureFor(err, options.onError) as CallToolResult;
  }
  return { ...result, _meta: { ...result._meta, [RUN_META_KEY]: run.handle } };
}

/**
 * The gate's refusals this era answers as protocol errors with their own numbers, never tool
 * results: a refused state (as a forged one is), and the `headers` step's HeaderMismatch (the
 * revision's error; modern-http.ts keeps its 400, as for a disagreeing Mcp-Method or Mcp-Name).
 */
function refuseAsProtocolError(decision: GateDecision): void {
  if (decision.kind === 'deny' && isRequestStateCode(decision.code)) {
    throw protocolError(
      new ToolgateError(decision.code, decision.message, decision.details as RequestStateRefusal),
    );
  }
  if (decision.kind === 'deny' && decision.code === 'MCP_HEADER_MISMATCH') {
    throw protocolError(
      new ToolgateError(
        decision.code,
        decision.message,
        decision.details as ErrorDetails['MCP_HEADER_MISMATCH'],
      ),
    );
  }
}

const REQUEST_STATE_CODES: ReadonlySet<ErrorCode> = new Set([
  'REQUEST_STATE_EXPIRED',
  'REQUEST_STATE_MISMATCH',
  'REQUEST_STATE_REPLAYED',
]);

function isRequestStateCode(
  code: ErrorCode,
): code is 'REQUEST_STATE_EXPIRED' | 'REQUEST_STATE_MISMATCH' | 'REQUEST_STATE_REPLAYED' {
  return REQUEST_STATE_CODES.has(code);
}
