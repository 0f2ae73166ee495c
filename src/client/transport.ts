/**
 * @module The port the client SDK talks to the gateway through: REST (rest-transport.ts) or MCP
 * (mcp-transport.ts). A transport only carries requests; it never runs a tool, and it answers
 * `GatewayUnavailableError` when the gateway cannot be reached after the bounded retries.
 */
import type { RenderedCall } from '../core/index.js';
import type { CallAllowed, CallDenied, CallNotApproved } from './call-result.js';
import type { ToolDescriptor } from './definitions-cache.js';

/** A call waiting for approval, as the wire said it: enough to follow it. */
export interface WirePending {
  readonly kind: 'pending_approval';
  readonly approvalId: string;
  readonly callId: string;
  readonly rendered: RenderedCall | null;
  readonly message: string;
  /** MCP 2026-07-28: the sealed state a retry echoes; null on REST. */
  readonly requestState: string | null;
}

export type WireAnswer = CallAllowed | CallDenied | WirePending;

export type ListAnswer =
  | { readonly kind: 'unchanged' }
  | {
      readonly kind: 'tools';
      readonly tools: readonly ToolDescriptor[];
      readonly revision: string | null;
    };

/** The call a transport carries: the tool, its arguments and the idempotency key of every attempt. */
export interface WireCall {
  readonly name: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly idempotencyKey: string;
  readonly signal?: AbortSignal;
}

/**
 * What the gateway says of a call made under an idempotency key (REST
 * `GET /v1/sessions/:id/idempotency/:key`): null when it knows no such call of this principal
 * (never made, expired, or given back because it was refused before running).
 */
export type KeyOutcome =
  | {
      readonly state: 'succeeded';
      readonly callId: string;
      readonly output: unknown;
      readonly trust: unknown;
    }
  | {
      readonly state: 'failed';
      readonly callId: string;
      readonly code: string;
      readonly rule: string;
      readonly message: string;
    }
  | { readonly state: 'running' | 'unknown'; readonly callId: string };

export interface Transport {
  /** The outcome of the call made under `key` to `tool`, or null (REST only: MCP carries no key). */
  outcome(tool: string, key: string, signal?: AbortSignal): Promise<KeyOutcome | null>;
  /** The session's tools; `revision` is the held set's validator, answered `unchanged` if current. */
  listTools(revision: string | null, signal?: AbortSignal): Promise<ListAnswer>;
  call(call: WireCall): Promise<WireAnswer>;
  /**
   * One look at a pending approval: still pending (with what the next look needs), not approved,
   * or — once approved — the completed call, run through the gate again with the same arguments.
   */
  follow(call: WireCall, pending: WirePending): Promise<WireAnswer | CallNotApproved>;
  /** Registers what to do when the gateway says the tool set changed (MCP list_changed). */
  onListChanged(listener: () => void): void;
  close(): Promise<void>;
}
