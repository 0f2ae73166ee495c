/**
 * @module Withdrawing the approvals of runs that ended (C8, docs/architecture.md §6). An
 * approval belongs to its run: once the run is closed, revoked or expired no retry can use it,
 * so a request still waiting (or approved and unused) is marked `withdrawn` — audited as
 * `approval.withdrawn`, no longer decidable, and no longer in any approver's inbox. Done at
 * close and revoke time, at the first refused use of an expired run, at a decision on an approval
 * whose run has ended, and by the housekeeping sweep for runs nobody touched again.
 */
import type { Kysely } from 'kysely';
import { systemActor } from '../../core/index.js';
import { appendEvent, type Database } from '../../records/store/index.js';

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
 * Withdraws every open approval whose run has ended (not open, or past its expiry) — the
 * sweep's part, for runs that ended with nobody calling again. Returns how many.
 */
export async function withdrawEndedRunApprovals(db: Kysely<Database>, now: Date): Promise<number> {
  const rows = await db
    .selectFrom('approvals')
    .innerJoin('sessions', 'sessions.id', 'approvals.session_id')
    .select(['approvals.id as id', 'approvals.session_id as session_id', 'sessions.status as run'])
    .where('approvals.status', 'in', [...OPEN])
    .where((eb) =>
      eb.or([
        eb('sessions.status', '<>', 'open'),
        eb('sessions.expires_at', '<=', now.toISOString()),
      ]),
    )
    .execute();
  let count = 0;
  for (const reason of ['run ended', 'run expired'] as const) {
    const batch = rows.filter((r) => (r.run === 'open') === (reason === 'run expired'));
    if (batch.length > 0) count += (await withdraw(db, batch, reason, now)).length;
  }
  return count;
}
