/**
 * @module What an agent may learn of an approval one of its calls waits for (docs/architecture.md
 * §6, `approvalStatus`): its state, never who decided; and a held call's wait for its decision
 * (`awaitApproval`). The caller's own session must be named, and the approval must belong to the
 * same principal (asked in that session or another of the principal's runs: approval-owner.ts);
 * anyone else's is not found.
 */
import { type AgentPrincipal, ToolgateError } from '../../core/index.js';
import type { SessionRow } from '../../records/store/index.js';
import type { SessionService } from '../sessions/index.js';
import type { ApprovalDesk } from './approval-desk.js';
import type { ApprovalOwner } from './approval-owner.js';
import type { ApprovalView } from './approval-view.js';
import type { ApprovalWaits, WaitOutcome } from './approval-waits.js';

/** An approval as its agent sees it (the agent API's `AgentApprovalStatus`). */
export interface SessionApprovalStatus {
  readonly approval_id: string;
  readonly status: ApprovalView['status'];
  readonly tool: string;
  readonly version: string;
  readonly expires_at: string;
  readonly decided_at: string | null;
  /** The rejecting approver's reason, or why the approval was withdrawn; null otherwise. */
  readonly reason: string | null;
}

/** The principal of a run, as its row holds it: whose approvals it may see and wait for. */
function ownerOf(run: SessionRow): ApprovalOwner {
  return { agentId: run.agent_id, userId: run.user_id, credential: run.credential };
}

export class SessionApprovals {
  readonly #sessions: Pick<SessionService, 'require'>;
  readonly #approvals: Pick<ApprovalDesk, 'getOwned'>;
  readonly #waits: Pick<ApprovalWaits, 'wait'> | null;

  constructor(
    sessions: Pick<SessionService, 'require'>,
    approvals: Pick<ApprovalDesk, 'getOwned'>,
    /** Held calls' waits; null: a call is never held (answered pending at once). */
    waits: Pick<ApprovalWaits, 'wait'> | null = null,
  ) {
    this.#sessions = sessions;
    this.#approvals = approvals;
    this.#waits = waits;
  }

  /** The approval's state, for the caller's own session only (else SESSION_NOT_FOUND/NOT_FOUND). */
  async status(
    sessionId: string,
    who: AgentPrincipal,
    approvalId: string,
  ): Promise<SessionApprovalStatus> {
    const run = await this.#sessions.require(sessionId, who);
    const view: ApprovalView | null = await this.#approvals
      .getOwned(approvalId, ownerOf(run))
      .catch(() => null);
    // Another principal's approval is not found, whoever's it is: nothing says it exists.
    if (view === null)
      throw new ToolgateError('NOT_FOUND', `no approval ${approvalId} for this caller`, {});
    return {
      approval_id: view.id,
      status: view.status,
      tool: view.tool_id,
      version: view.tool_version,
      expires_at: view.expires_at,
      decided_at: view.decided_at,
      reason: view.status === 'rejected' || view.status === 'withdrawn' ? view.reason : null,
    };
  }

  /**
   * Holds a call of the caller's own session until approval `approvalId` — the principal's, in
   * any of its runs — leaves `pending`, at most `timeoutMs`, or until `signal` aborts. `settled`:
   * the caller asks the gate again, which decides; `pending`: answer the call as still waiting.
   * Another principal's approval, or none, is `pending` at once.
   */
  async await(
    sessionId: string,
    who: AgentPrincipal,
    approvalId: string,
    options: { readonly timeoutMs: number; readonly signal: AbortSignal },
  ): Promise<WaitOutcome> {
    if (this.#waits === null) return 'pending';
    const run = await this.#sessions.require(sessionId, who);
    return this.#waits.wait(approvalId, ownerOf(run), options);
  }
}
