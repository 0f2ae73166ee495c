/**
 * @module What a call through the gateway answers the client SDK: a discriminated union the agent
 * switches over exhaustively. A denial is a value, not an exception: the gateway decided, and the
 * agent should read why. Only "the gateway could not be reached" is thrown (client-errors.ts).
 */

import type { ErrorCode, RenderedCall } from '../core/index.js';

/** The call ran; `output` is the tool's checked result. */
export interface CallAllowed<TOutput = unknown> {
  readonly kind: 'allow';
  readonly callId: string;
  readonly tool: string;
  readonly version: string;
  readonly output: TOutput;
  /** A deprecated version's warning, and the like. */
  readonly warnings: readonly unknown[];
  /** The idempotency key this call ran under (REST); a retry with it never runs it again. */
  readonly idempotencyKey: string | null;
}

/** The gateway refused the call: a code of its error catalogue, the rule, a message for people. */
export interface CallDenied {
  readonly kind: 'deny';
  readonly code: ErrorCode;
  readonly message: string;
  readonly rule: string | null;
  readonly callId: string | null;
  readonly details: Readonly<Record<string, unknown>>;
}

/** How waiting for an approval ends when nobody approved it: nothing ran. */
export interface CallNotApproved {
  readonly kind: 'not_approved';
  readonly approvalId: string;
  readonly status: 'rejected' | 'expired' | 'withdrawn';
  /** The approver's reason for a rejection, or why the approval was withdrawn. */
  readonly reason: string | null;
}

export interface WaitOptions {
  /** How often the approval is looked at; default 1000 ms. */
  readonly pollMs?: number;
  /** Give up waiting (the approval stays pending on the gateway); default 10 minutes. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/**
 * The call waits for a person. `wait()` follows the approval until it is decided, then completes
 * the call (the same arguments, the same idempotency key) and answers what the gateway decided.
 */
export interface CallPending<TOutput = unknown> {
  readonly kind: 'pending_approval';
  readonly approvalId: string;
  readonly callId: string;
  /** What the approver sees: the resolved call, never the model's account of it. */
  readonly rendered: RenderedCall | null;
  readonly message: string;
  wait(options?: WaitOptions): Promise<Settled<TOutput>>;
}

/** What a call answers once nothing is left to wait for. */
export type Settled<TOutput = unknown> = CallAllowed<TOutput> | CallDenied | CallNotApproved;

export type CallResult<TOutput = unknown> = Settled<TOutput> | CallPending<TOutput>;

/**
 * A map from tool names to their argument and output types, for typed calls:
 * `new ToolgateClient<{ add_label: { input: { ticket_id: string; label: string }; output: { labels: string[] } } }>(…)`.
 */
export type ToolTypes = Record<string, { readonly input: unknown; readonly output: unknown }>;
