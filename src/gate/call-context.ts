/** @module Who is calling, and the options of one call: what every front hands the gate. */
import type { AgentPrincipal, TraceOrigin } from '../core/index.js';
import type { CallProgress } from './call-progress.js';

/**
 * One call's caller and where it calls from: the principal the authenticator built once at the
 * edge (agent, credential, token user, OAuth scopes), carried as it is, and one of its sessions.
 * The session and the model are options of the call, not identity: the session must have been
 * opened by the same principal.
 */
export interface CallContext {
  readonly principal: AgentPrincipal;
  readonly sessionId: string;
  /** The model behind the agent, as the agent reports it (audited, not trusted). */
  readonly model?: string;
  /**
   * A 2026-07-28 MCP `tools/call` over HTTP only: the request's `Mcp-Param-*` headers as sent
   * (names in lower case, values raw), which the `headers` step compares with the resolved
   * version's `x-mcp-header` declarations. Absent (REST, the 2025 eras, stdio, the library):
   * there are no mirrored headers to agree, and the step lets the call go on.
   */
  readonly mcpParamHeaders?: Readonly<Record<string, string>>;
  /**
   * Where the call came from, for its trace: the caller's W3C context as the front read it (HTTP
   * header, MCP `params._meta`), the front, its transport and ids. Absent: no context (a library
   * call), and a traced call starts a new trace.
   */
  readonly trace?: TraceOrigin;
}

/**
 * A library caller in this process: a bare agent id, with no credential and no token — the same
 * as `{ principal: { kind: 'agent', agentId } }`; it matches only sessions opened without a
 * credential (as `asPrincipal` of a bare id).
 */
export interface InProcessCall {
  readonly agentId: string;
  readonly sessionId: string;
  readonly model?: string;
}

/** The call context of what a caller handed the gate (built once, at the gate's door). */
export function callContextOf(call: CallContext | InProcessCall): CallContext {
  if ('principal' in call) return call;
  return {
    principal: { kind: 'agent', agentId: call.agentId },
    sessionId: call.sessionId,
    ...(call.model !== undefined ? { model: call.model } : {}),
  };
}

export interface CallOptions {
  /**
   * A major version to pin, as the front received it (MCP `_meta["io.toolgate/version"]`): a
   * non-negative integer or its decimal spelling. The same as `name@<major>`; both given must agree.
   */
  readonly version?: unknown;
  /** Same key and same arguments → the first result; same key, other arguments → refused. */
  readonly idempotencyKey?: string;
  /** Receives an upstream MCP tool's progress while it runs (never after the call returned). */
  readonly onProgress?: (progress: CallProgress) => void;
  /** Withdraws the call: not run if not yet started; an upstream MCP call is cancelled upstream. */
  readonly signal?: AbortSignal;
  /**
   * The approval a retried call names (from a verified MCP `requestState`): only this approval
   * may let the call run, only for the very call it was opened for, and never a second time; a
   * call that still waits gets this approval back, never a new one.
   */
  readonly boundApproval?: BoundApproval;
  /**
   * Set by the gate when it runs a tool's declared preview for the reviewer of a waiting call
   * (preview-runner.ts): the approval it is for. Such a call must be a `read` that needs no
   * approval (the `approval` step refuses anything else), and starts no preview of its own.
   */
  readonly previewFor?: string;
}

/**
 * The approval a retry names, and the call it was asked for: what a sealed `requestState` binds
 * (MCP 2026-07-28, `via: 'request_state'`, the default), or the approval a call held open by a
 * front waited for (`via: 'wait'`: the front asks again once it left `pending`). Only the refusals
 * differ: a state's are the REQUEST_STATE_* protocol errors; a held call's are APPROVAL_INVALID
 * tool results, and a held call whose tool moved to another version meanwhile is decided afresh.
 */
export interface BoundApproval {
  readonly approvalId: string;
  readonly toolId: string;
  readonly toolVersion: string;
  readonly argsHash: string;
  readonly via?: 'request_state' | 'wait';
}

/**
 * What an MCP `resources/read` or `prompts/get` hands the gate in place of a tool name: the URI
 * or the listed prompt name as the client sent it. The `resolve` step finds the one offered entry
 * it names (a template's variables bound there, once) or refuses RESOURCE_NOT_FOUND /
 * PROMPT_NOT_FOUND; the front looks nothing up (docs/architecture.md §3, step `resolve`).
 */
export type EntryRef =
  | { readonly entry: 'resource'; readonly uri: string }
  | { readonly entry: 'prompt'; readonly name: string };

/** True for an EntryRef exactly (a string URI or name); anything else is a tool reference. */
export function isEntryRef(ref: unknown): ref is EntryRef {
  if (typeof ref !== 'object' || ref === null) return false;
  const r = ref as Record<string, unknown>;
  return (
    (r.entry === 'resource' && typeof r.uri === 'string') ||
    (r.entry === 'prompt' && typeof r.name === 'string')
  );
}
