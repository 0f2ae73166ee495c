/**
 * @module An approval request as stored and as shown (C8): the call it covers, a new request's
 * row, its token binding, and the view every reader gets (an expired pending request reads as
 * `expired`). The approval desk (approval-desk.ts) decides and consumes; this only shapes.
 */
import { randomBytes } from 'node:crypto';
import { type ApprovalDisplay, displayOf, type RenderedCall } from '../../core/index.js';
import type { ApprovalRow } from '../../records/store/index.js';
import type { ApprovalKey } from './approval-owner.js';
import type { ApprovalScopeView, ScopeUse } from './approval-scopes.js';
import type { ApprovalBinding } from './approval-token.js';

export interface ApprovalView {
  readonly id: string;
  readonly status: 'pending' | 'approved' | 'rejected' | 'consumed' | 'expired' | 'withdrawn';
  readonly session_id: string;
  readonly agent_id: string;
  readonly user_id: string | null;
  readonly tool_id: string;
  readonly tool_version: string;
  readonly action_class: string;
  readonly rendered: RenderedCall;
  /**
   * The reasons, arguments, cost and preview as text a person reads, every invisible or bidi
   * character a visible escape (core/approval-reasons.ts); `rendered` keeps the raw values.
   */
  readonly display: ApprovalDisplay;
  readonly second_factor: boolean;
  readonly out_of_band: boolean;
  readonly created_at: string;
  readonly expires_at: string;
  readonly decided_at: string | null;
  readonly decided_by: string | null;
  readonly reason: string | null;
  /**
   * The bounded scope it was approved with (docs/operators-and-approvals.md, "Scoped
   * approvals"), what is used of it and whether it still holds; null for one call. Set by the
   * desk's `get`; lists leave it out.
   */
  readonly scope?: ApprovalScopeView | null;
}

export interface ApprovalCall {
  readonly sessionId: string;
  readonly agentId: string;
  readonly userId: string | null;
  /** The credential of the call's run (its row's), null for in-process runs: the principal. */
  readonly credential: string | null;
  /**
   * The principal whose share of the agent's pending approvals this call spends: the token user's
   * id when a token vouched for the session's user, null for the agent's own keys together.
   */
  readonly tokenUser: string | null;
  readonly toolId: string;
  readonly toolVersion: string;
  readonly actionClass: string;
  readonly argsHash: string;
  readonly rendered: RenderedCall;
}

/** What `resolve` found or opened for a call. */
export type ResolvedApproval =
  | {
      readonly kind: 'approved';
      readonly approvalId: string;
      readonly approver: string;
      /** Set when a scoped approval covered the call: which use of it this is. */
      readonly scope?: ScopeUse;
    }
  /** `created`: this call opened the request (a retry finds the one it opened). */
  | { readonly kind: 'pending'; readonly approvalId: string; readonly created?: true }
  | { readonly kind: 'rejected'; readonly approvalId: string; readonly reason: string | null }
  | { readonly kind: 'too_many'; readonly scope: 'session' | 'agent' | 'principal' };

/** What `resolveBound` found of the approval a retry names. */
export type BoundResolution =
  | { readonly kind: 'approved'; readonly approvalId: string; readonly approver: string }
  | { readonly kind: 'pending'; readonly approvalId: string }
  | { readonly kind: 'rejected'; readonly reason: string | null }
  | { readonly kind: 'refused'; readonly why: 'mismatch' | 'used' | 'withdrawn' | 'expired' };

export const REQUEST_TTL_MS = 24 * 3600 * 1000;
/** The principal, tool, version and hash an approval of `call` covers. */
export function keyOf(call: ApprovalCall): ApprovalKey {
  return {
    agentId: call.agentId,
    userId: call.userId,
    credential: call.credential,
    toolId: call.toolId,
    toolVersion: call.toolVersion,
    argsHash: call.argsHash,
  };
}

/** A new pending request of `call`, asked at `now` in the call's run. */
export function newRequest(call: ApprovalCall, now: Date): ApprovalRow {
  return {
    id: `apr_${randomBytes(12).toString('base64url')}`,
    session_id: call.sessionId,
    agent_id: call.agentId,
    user_id: call.userId,
    tool_id: call.toolId,
    tool_version: call.toolVersion,
    action_class: call.actionClass,
    args_hash: call.argsHash,
    rendered: JSON.stringify(call.rendered),
    status: 'pending',
    second_factor: call.rendered.second_factor ? 1 : 0,
    out_of_band: call.rendered.out_of_band ? 1 : 0,
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + REQUEST_TTL_MS).toISOString(),
    decided_at: null,
    decided_by: null,
    reason: null,
    token: null,
    token_id: null,
    consumed_at: null,
    totp_step: null,
  };
}

export function bindingOf(row: ApprovalRow): ApprovalBinding {
  return {
    approvalId: row.id,
    toolId: row.tool_id,
    toolVersion: row.tool_version,
    agentId: row.agent_id,
    sessionId: row.session_id,
    argsHash: row.args_hash,
  };
}
export function toView(row: ApprovalRow, now: Date): ApprovalView {
  const expired = row.status === 'pending' && Date.parse(row.expires_at) <= now.getTime();
  const rendered = JSON.parse(row.rendered) as RenderedCall;
  return {
    id: row.id,
    status: (expired ? 'expired' : row.status) as ApprovalView['status'],
    session_id: row.session_id,
    agent_id: row.agent_id,
    user_id: row.user_id,
    tool_id: row.tool_id,
    tool_version: row.tool_version,
    action_class: row.action_class,
    rendered,
    display: displayOf(rendered),
    second_factor: row.second_factor === 1,
    out_of_band: row.out_of_band === 1,
    created_at: row.created_at,
    expires_at: row.expires_at,
    decided_at: row.decided_at,
    decided_by: row.decided_by,
    reason: row.reason,
  };
}
