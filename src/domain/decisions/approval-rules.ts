/**
 * @module What the approval desk asks of a stored request before a decision: which need a step-up
 * (docs/architecture.md §1, "Action classes and their default gates"), which an organisation may
 * reserve for passkeys, and the refusals of a request that is not pending.
 */
import type { Kysely } from 'kysely';
import { ToolgateError } from '../../core/index.js';
import type { ApprovalRow, Database } from '../../records/store/index.js';
import { withdrawRunApprovals } from '../sessions/index.js';
import { toView } from './approval-view.js';

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

/**
 * The request `id` when it can be decided now; else NOT_FOUND or APPROVAL_STATE. A revoked run
 * (its holder or an operator said stop) whose withdrawal did not happen yet: its approval is
 * withdrawn now, not decided. A run that was closed or expired leaves its approval to the
 * principal, who completes it from another run (approval-owner.ts); so does one whose row is gone
 * — nobody can use it, and it expires on its own.
 */
export async function pendingRequest(
  db: Kysely<Database>,
  id: string,
  now: Date,
): Promise<ApprovalRow> {
  const row = await db.selectFrom('approvals').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new ToolgateError('NOT_FOUND', `no approval ${id}`, {});
  const status = toView(row, now).status;
  if (status === 'withdrawn') throw withdrawnError(id, row.reason);
  if (status !== 'pending') throw stateError(id, 'pending');
  const run = await db
    .selectFrom('sessions')
    .select('status')
    .where('id', '=', row.session_id)
    .executeTakeFirst();
  if (run?.status === 'revoked') {
    await withdrawRunApprovals(db, row.session_id, 'run revoked', now);
    throw withdrawnError(id, 'run revoked');
  }
  return row;
}
