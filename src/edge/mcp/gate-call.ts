/**
 * @module The call into the gate of a tools/call, for both MCP eras (C15, docs/architecture.md
 * §6): the caller's abort signal, its progress relayed under its own token (progress-relay.ts),
 * the version pin it carries (version-meta.ts) and, on 2026-07-28, the approval its echoed
 * `requestState` binds. Era-neutral: each era's server passes what its protocol gives it.
 */
import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { AgentApi, GateDecision } from '../../api/index.js';
import { type CallProgress, type TraceOrigin, traceParentOf } from '../../core/index.js';
import { progressRelay } from './progress-relay.js';
import { versionOption } from './version-meta.js';

type CallContext = Parameters<AgentApi['invoke']>[0];
type CallOptions = NonNullable<Parameters<AgentApi['invoke']>[3]>;

/** A tools/call's params as both SDKs parse them. */
export interface ToolCallParams {
  readonly name: string;
  readonly arguments?: Record<string, unknown> | undefined;
  readonly _meta?: Record<string, unknown> | undefined;
}

/** What the era's protocol gives the call: its abort signal and the way to send progress. */
export interface ToolCallIo {
  readonly signal: AbortSignal;
  readonly notify: (notification: ServerNotification) => Promise<void>;
  readonly boundApproval?: CallOptions['boundApproval'];
  /** Where the request came from, for its trace (the W3C context is read from `_meta` here). */
  readonly origin?: McpOrigin;
}

/** What each era knows of a request for its trace: transport, HTTP `traceparent`, ids. */
export interface McpOrigin {
  readonly transport: 'tcp' | 'pipe';
  /** The HTTP request's `traceparent` header, as sent (over HTTP). */
  readonly traceparent?: string | undefined;
  readonly protocolVersion?: string;
  readonly jsonrpcId?: string | number;
}

/**
 * The call's trace origin: the caller's context from `params._meta.traceparent` (it names this
 * message), else the HTTP header (docs/operations.md, "Tracing"). Never throws.
 */
function traceOrigin(meta: Record<string, unknown> | undefined, origin: McpOrigin): TraceOrigin {
  return {
    parent: traceParentOf(meta, origin.traceparent),
    front: 'mcp',
    transport: origin.transport,
    ...(origin.protocolVersion !== undefined ? { protocolVersion: origin.protocolVersion } : {}),
    ...(origin.jsonrpcId !== undefined ? { jsonrpcId: origin.jsonrpcId } : {}),
  };
}

export interface ToolCall {
  /**
   * Asks the gate (again, after a person answered or a held call's approval left `pending`: the
   * gate decides anew). `bound` names the approval this ask must use, in place of the one the
   * call was made with.
   */
  invoke(bound?: CallOptions['boundApproval']): Promise<GateDecision>;
  /** Settles once every progress report is written: the result must not overtake them. */
  flush(): Promise<void>;
  /** Reports progress under the caller's own token; a no-op when it sent none. */
  progress(report: CallProgress): void;
}

/**
 * One tools/call into the gate. The agent's progress token asks for the upstream's progress;
 * the caller's cancellation aborts `signal`, which withdraws the call (and cancels it upstream).
 */
export function toolCall(
  agent: Pick<AgentApi, 'invoke'>,
  ctx: CallContext,
  params: ToolCallParams,
  io: ToolCallIo,
): ToolCall {
  const token = params._meta?.progressToken;
  const relay =
    typeof token === 'string' || typeof token === 'number' ? progressRelay(token, io.notify) : null;
  const options: CallOptions = {
    signal: io.signal,
    ...(relay ? { onProgress: relay.onProgress } : {}),
    ...(io.boundApproval ? { boundApproval: io.boundApproval } : {}),
    ...versionOption(params._meta),
  };
  const traced = io.origin ? { ...ctx, trace: traceOrigin(params._meta, io.origin) } : ctx;
  return {
    invoke: (bound) =>
      agent.invoke(
        traced,
        params.name,
        params.arguments ?? {},
        bound ? { ...options, boundApproval: bound } : options,
      ),
    flush: () => relay?.flush() ?? Promise.resolve(),
    progress: (report) => relay?.onProgress(report),
  };
}
