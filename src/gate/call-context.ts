/** @module Who is calling, and the options of one call: what every front hands the gate. */
import type { SessionPrincipal } from '../domain/sessions/index.js';
import type { CallProgress } from './call-progress.js';

/**
 * Who is calling: an authenticated principal (agent, and the credential and token user the front
 * verified) in one of its sessions. The session must have been opened by the same principal.
 */
export interface CallContext extends SessionPrincipal {
  readonly agentId: string;
  readonly sessionId: string;
  /** The model behind the agent, as the agent reports it (audited, not trusted). */
  readonly model?: string;
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
}

/** What a sealed `requestState` binds of the call it was minted for. */
export interface BoundApproval {
  readonly approvalId: string;
  readonly toolId: string;
  readonly toolVersion: string;
  readonly argsHash: string;
}
