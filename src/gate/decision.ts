/** @module What the gate answers for one call: a discriminated union, built by small factories. */

import type { ErrorCode } from '../core/index.js';
import type { RenderedCall } from '../domain/decisions/index.js';
import type { TrustLabel } from '../domain/text-trust/index.js';

export type { RenderedCall };

/** Each denial is a code of the one error catalogue, so its HTTP status and docs exist. */
export type DenyCode = Extract<
  ErrorCode,
  | 'TOOL_NOT_REGISTERED'
  | 'RESOURCE_NOT_FOUND'
  | 'PROMPT_NOT_FOUND'
  | 'TOOL_RETIRED'
  | 'TOOL_UNAVAILABLE'
  | 'INPUT_INVALID'
  | 'GRANT_MISSING'
  | 'POLICY_DENIED'
  | 'RATE_LIMITED'
  | 'BUDGET_EXCEEDED'
  | 'CODE_REFUSED'
  | 'CODE_UNCHECKABLE'
  | 'TOXIC_FLOW'
  | 'DESTINATION_NOT_ALLOWED'
  | 'APPROVAL_INVALID'
  | 'IDEMPOTENCY_CONFLICT'
  | 'OUTPUT_INVALID'
  | 'RESULT_BLOCKED'
  | 'EXECUTION_FAILED'
  | 'EGRESS_DENIED'
  | 'SANDBOX_UNAVAILABLE'
  | 'SANDBOX_TIMEOUT'
  | 'SANDBOX_LIMIT'
  | 'CREDENTIAL_UNAVAILABLE'
  | 'SESSION_SUSPENDED'
  | 'INSUFFICIENT_SCOPE'
  | 'CALL_CANCELLED'
  | 'SHUTTING_DOWN'
  | 'REQUEST_STATE_EXPIRED'
  | 'REQUEST_STATE_MISMATCH'
  | 'REQUEST_STATE_REPLAYED'
  | 'MCP_HEADER_MISMATCH'
>;

export interface Allowed {
  readonly kind: 'allow';
  readonly callId: string;
  readonly toolId: string;
  readonly version: string;
  readonly output: unknown;
  /** e.g. a deprecation notice with the retirement date. */
  readonly warnings: readonly string[];
  /** The version called is deprecated: when, when it retires, what replaces it (C2). */
  readonly deprecation?: DeprecationNotice;
  /**
   * How `output` reads: `'upstream'` when it is an upstream provider's result passed through as
   * the provider gave it once checked (content parts, a structured value, an error flag: core's
   * `McpToolResult`); absent for a tool's own value. Each front renders it in its own terms.
   */
  readonly outputForm?: 'upstream';
  /** Where the result came from and what its scan found; fronts pass it on (MCP `_meta`, REST `trust`). */
  readonly trust?: TrustLabel;
}

/**
 * A deprecated version's notice (C2): REST sends it as `Deprecation` (RFC 9745) and `Sunset`
 * (RFC 8594) headers, MCP as `_meta["io.toolgate/deprecation"]`, the audit in the pre record.
 */
export interface DeprecationNotice {
  readonly version: string;
  readonly deprecated_at: string | null;
  readonly retire_at: string | null;
  /** The version callers should move to, if the session may call one (its default version). */
  readonly successor: string | null;
}

export interface Denied {
  readonly kind: 'deny';
  readonly callId: string;
  readonly code: DenyCode;
  /** The rule that fired, e.g. `url.host_not_allowed`, `rate.per_run`, `flow.private_then_egress`. */
  readonly rule: string;
  /** For humans and models; never holds secrets or names of tools outside the caller's set. */
  readonly message: string;
  readonly details?: unknown;
}

export interface PendingApproval {
  readonly kind: 'pending_approval';
  readonly callId: string;
  readonly approvalId: string;
  /** What the reviewer sees: the resolved call, not the model's account of it. */
  readonly rendered: RenderedCall;
  readonly message: string;
  /** The canonical-argument hash the approval binds (a sealed MCP `requestState` binds it too). */
  readonly argsHash: string;
}

export type GateDecision = Allowed | Denied | PendingApproval;

export function deny(
  callId: string,
  code: DenyCode,
  rule: string,
  message: string,
  details?: unknown,
): Denied {
  return details === undefined
    ? { kind: 'deny', callId, code, rule, message }
    : { kind: 'deny', callId, code, rule, message, details };
}
