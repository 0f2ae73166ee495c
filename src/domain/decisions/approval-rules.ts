/**
 * @module What the approval desk asks of a stored request before a decision: which need a step-up
 * (docs/architecture.md §1, "Action classes and their default gates"), which an organisation may
 * reserve for passkeys, and the refusals of a request that is not pending.
 */
import { ToolgateError } from '../../core/index.js';
import type { ApprovalRow } from '../../records/store/index.js';

/** The decisions an organisation may reserve for passkeys: irreversible and permission-changing. */
export function highRisk(actionClass: string): boolean {
  return actionClass === 'irreversible' || actionClass === 'permission_change';
}

/**
 * Which approvals need the approver's fresh TOTP: every call of an irreversible or
 * permission-changing tool, and any call whose tool declares a second factor.
 */
export function needsStepUp(row: Pick<ApprovalRow, 'second_factor' | 'action_class'>): boolean {
  return (
    row.second_factor === 1 ||
    row.action_class === 'irreversible' ||
    row.action_class === 'permission_change'
  );
}

export function withdrawnError(id: string, reason: string | null): ToolgateError {
  return new ToolgateError(
    'APPROVAL_STATE',
    `approval ${id} was withdrawn (${reason ?? 'its run ended'}): no retry can use it, so it cannot be decided`,
    { approvalId: id },
  );
}

export function stateError(id: string, expected: string): ToolgateError {
  return new ToolgateError('APPROVAL_STATE', `approval ${id} is not ${expected}`, {
    approvalId: id,
  });
}
