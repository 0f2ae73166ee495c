/**
 * @module Withdrawing the approvals of runs someone ended on purpose (C8, docs/architecture.md
 * §6). An approval belongs to the principal that asked for it, in any of its runs (a client that
 * reconnected completes it from its new run), so a run that was merely closed by its client,
 * evicted, idle or expired leaves it be. A run revoked (by its holder or an operator) or closed by
 * an operator is a decision that it stop: a request still waiting (or approved and unused) is
 * marked `withdrawn` — audited as `approval.withdrawn`, no longer decidable, no longer in any
 * approver's inbox. Done at revoke and operator-close time, at a decision on an approval whose
 * run was revoked, and by the housekeeping sweep for any the first pass missed.
 */
import type { Kysely } from 'kysely';
import { systemActor } from '../../core/index.js';
import { appendEvent, type Database } from '../../records/store/index.js';

/** Why an operator's close withdraws what waits in the run (`SessionService.closeBy`). */
export const OPERATOR_CLOSE = 'run closed by an operator';

/** Statuses an ended run can still hold open: waiting, or approved and not yet used. */
const OPEN = ['pending', 'approved'] as const;

async function withdraw(
  db: Kysely<Database>,
  rows: readonly { id: string; session_id: string }[],
  reason: string,
  now: Date,
): Promise<string[]> {
  const withdrawn: string[] = [];
  for (const row of rows) {
    // One row at a time, each moved only from an open status: a decision racing the withdrawal
    // wins or loses whole, and only the request that moved a row audits it.
    const done = await db.transaction().execute(async (trx) => {
      const moved = await trx
        .updateTable('approvals')
        .set({ status: 'withdrawn', decided_at: now.toISOString(), reason })
        .where('id', '=', row.id)
        .where('status', 'in', [...OPEN])
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) !== 1) return false;
      await appendEvent(trx, systemActor('runs'), now, {
        action: 'approval.withdrawn',
        subject: `approval:${row.id}`,
        details: { session: row.session_id, reason },
      });
      return true;
    });
    if (done) withdrawn.push(row.id);
  }
  return withdrawn;
}

/** Withdraws the open approvals of one run that just ended; returns their ids. */
export async function withdrawRunApprovals(
  db: Kysely<Database>,
  sessionId: string,
  reason: string,
  now: Date,
): Promise<string[]> {
  const rows = await db
    .selectFrom('approvals')
    .select(['id', 'session_id'])
    .where('session_id', '=', sessionId)
    .where('status', 'in', [...OPEN])
    .execute();
  return rows.length === 0 ? [] : withdraw(db, rows, reason, now);
}

/**
 * Withdraws every open approval whose run was revoked and that is still open (the revoke's own
 * withdrawal did not finish) — the sweep's part. Returns how many.
 */
export async function withdrawEndedRunApprovals(db: Kysely<Database>, now: Date): Promise<number> {
  const rows = await db
    .selectFrom('approvals')
    .innerJoin('sessions', 'sessions.id', 'approvals.session_id')
    .select(['approvals.id as id', 'approvals.session_id as session_id'])
    .where('approvals.status', 'in', [...OPEN])
    .where('sessions.status', '=', 'revoked')
    .execute();
  return rows.length === 0 ? 0 : (await withdraw(db, rows, 'run revoked', now)).length;
}
