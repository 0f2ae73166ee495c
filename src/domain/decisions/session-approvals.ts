/**
 * @module What an agent may learn of an approval one of its own session's calls waits for
 * (docs/architecture.md §6, `approvalStatus`): its state, never who decided; another session's
 * approval is not found, whoever's it is.
 */
import { type AgentPrincipal, ToolgateError } from '../../core/index.js';
import type { SessionService } from '../sessions/index.js';
import type { ApprovalDesk, ApprovalView } from './approval-desk.js';

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

export class SessionApprovals {
  readonly #sessions: Pick<SessionService, 'require'>;
  readonly #approvals: Pick<ApprovalDesk, 'get'>;

  constructor(sessions: Pick<SessionService, 'require'>, approvals: Pick<ApprovalDesk, 'get'>) {
    this.#sessions = sessions;
    this.#approvals = approvals;
  }

  /** The approval's state, for the caller's own session only (else SESSION_NOT_FOUND/NOT_FOUND). */
  async status(
    sessionId: string,
    who: AgentPrincipal,
    approvalId: string,
  ): Promise<SessionApprovalStatus> {
    await this.#sessions.require(sessionId, who);
    const view = await this.#approvals.get(approvalId).catch(() => null);
    // Another session's approval is not found, whoever's it is: nothing says it exists.
    if (view === null || view.session_id !== sessionId || view.agent_id !== who.agentId)
      throw new ToolgateError('NOT_FOUND', `no approval ${approvalId} in this session`, {});
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
}
