/**
 * @module What the approval desk reads for lists, counts and held calls (C8): pages newest first,
 * the pending count, the statuses, and which of many held calls' approvals are settled. Never
 * decides anything.
 */
import type { Kysely } from 'kysely';
import {
  decodeCursor,
  type Page,
  type PageRequest,
  pageFromRows,
  pageLimit,
} from '../../core/index.js';
import { type Database, olderThan } from '../../records/store/index.js';
import { type ApprovalView, toView } from './approval-view.js';

/** Ids per query when many held calls ask at once (well under every dialect's bound). */
const SETTLED_CHUNK = 500;

/** How many approval requests are in each status (the metrics' approval gauge). */
export async function statusCounts(db: Kysely<Database>): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom('approvals')
    .select('status')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .groupBy('status')
    .execute();
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

/** Requests still decidable (pending, not expired) at `now`. */
export async function countPending(db: Kysely<Database>, now: Date): Promise<number> {
  const row = await db
    .selectFrom('approvals')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'pending')
    .where('expires_at', '>', now.toISOString())
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Of these approvals, the ids no longer pending (decided, withdrawn, expired) or gone. */
export async function settledApprovals(
  db: Kysely<Database>,
  ids: readonly string[],
  now: Date,
): Promise<ReadonlySet<string>> {
  const still = new Set<string>();
  for (let i = 0; i < ids.length; i += SETTLED_CHUNK) {
    const rows = await db
      .selectFrom('approvals')
      .select(['id', 'status', 'expires_at'])
      .where('id', 'in', ids.slice(i, i + SETTLED_CHUNK))
      .execute();
    for (const r of rows)
      if (r.status === 'pending' && Date.parse(r.expires_at) > now.getTime()) still.add(r.id);
  }
  return new Set(ids.filter((id) => !still.has(id)));
}

export async function listApprovals(
  db: Kysely<Database>,
  status: string | undefined,
  now: Date,
): Promise<ApprovalView[]> {
  let q = db.selectFrom('approvals').selectAll().orderBy('created_at', 'desc').limit(500);
  if (status) q = q.where('status', '=', status);
  return (await q.execute()).map((r) => toView(r, now));
}

/**
 * One page of approvals, newest first, walked by (created_at, id): requests arriving while an
 * admin pages are above the walk and never push older ones out of it. `pending`
 * means still decidable; `expired` means pending past its time.
 */
export async function pageApprovals(
  db: Kysely<Database>,
  status: string | undefined,
  request: PageRequest,
  now: Date,
): Promise<Page<ApprovalView>> {
  const limit = pageLimit(request.limit);
  let q = db
    .selectFrom('approvals')
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1);
  if (status === 'pending' || status === 'expired') {
    q = q
      .where('status', '=', 'pending')
      .where('expires_at', status === 'pending' ? '>' : '<=', now.toISOString());
  } else if (status) q = q.where('status', '=', status);
  if (request.cursor !== undefined) {
    const [at, id] = decodeCursor('approvals', request.cursor);
    q = q.where(olderThan(String(at), String(id)));
  }
  const rows = (await q.execute()).map((r) => toView(r, now));
  return pageFromRows('approvals', rows, (a) => [a.created_at, a.id], limit);
}
