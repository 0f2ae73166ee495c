/**
 * @module The sequencer's one step on PostgreSQL (docs/architecture.md §5, "The audit log across
 * replicas"): in one transaction under the chain lock, take the oldest staged records, check each
 * against its writer stream's last integrated link (audit-chain/staged-hash.ts), link them onto
 * the chain's head in the order they were staged, insert them into `audit_log`, delete them from
 * the staging table and move the streams' heads. One transaction: a sequencer killed half way
 * leaves everything as it was, and the next one integrates the same records, once. The chain lock
 * (the advisory lock every integration and every event append takes) fences two sequencers: a
 * replica that still thinks it leads after it lost its connection waits for the lock and then
 * finds the records gone, so nothing is integrated twice whoever runs this.
 *
 * A break in a stream (a staged record removed, changed, or put in again) is not hidden and does
 * not stop the log: an `alert` record naming it (rule `audit.staging`) is integrated just before
 * the record where it was found, so the finding is in the chain itself, under the next signed
 * checkpoint, and `audit verify` reports it. A repeated record is not integrated again.
 */
import { sql, type Transaction } from 'kysely';
import {
  linkInPlace,
  STAGING_RULE,
  STREAM_GENESIS,
  type StagedBreak,
  type StreamHead,
  stagedBreak,
} from '../../audit-chain/index.js';
import { insertChained, readHead, rowWithoutCall, type UnchainedRow } from '../audit-append.js';
import type { Database } from '../database.js';
import { recordOf } from './audit-record.js';

/** Any 64-bit number, the same for every replica: the lock that orders integration and events. */
export const CHAIN_LOCK_KEY = 7_220_410_006n;

/**
 * An integration whose process stops answering (frozen, paused, its event loop blocked) for this
 * long inside its transaction is ended by the server, which lets the chain lock go: a hung
 * sequencer cannot hold the chain (and every event append) for longer.
 */
const IDLE_IN_INTEGRATION = '5s';

/** Staged records integrated in one transaction at most. */
export const INTEGRATE_BATCH = 2000;

export async function lockChain(trx: Transaction<Database>): Promise<void> {
  await sql`select pg_advisory_xact_lock(${sql.lit(CHAIN_LOCK_KEY.toString())}::bigint)`.execute(
    trx,
  );
}

export interface Integrated {
  /** Records put in the chain (alerts about breaks included). */
  readonly count: number;
  /**
   * When the oldest of them was staged (ms since the epoch; null when none): the caller measures
   * its wait once the integration has committed.
   */
  readonly oldestStagedAt: number | null;
  /** Breaks found, one per record where a stream stopped chaining. */
  readonly breaks: number;
  /** Whether more staged records were left than one transaction takes. */
  readonly more: boolean;
}

const NONE: Integrated = { count: 0, oldestStagedAt: null, breaks: 0, more: false };

function breakAlert(
  at: string,
  problem: StagedBreak,
  staged: { stream: string; rseq: number; hash: string },
  head: StreamHead,
): UnchainedRow {
  const what = {
    missing: `staged audit records ${head.rseq + 1}..${staged.rseq - 1} of stream ${staged.stream} are missing`,
    altered: `staged audit record ${staged.rseq} of stream ${staged.stream} does not match its hash or link`,
    repeated: `staged audit record ${staged.rseq} of stream ${staged.stream} was staged again after it was integrated`,
  }[problem];
  return rowWithoutCall({
    at,
    kind: 'alert',
    code: 'AUDIT_CHAIN_BROKEN',
    rule: STAGING_RULE,
    message: what,
    details: JSON.stringify({
      problem,
      stream: staged.stream,
      rseq: staged.rseq,
      expected_rseq: head.rseq + 1,
      staged_hash: staged.hash,
    }),
  });
}

/** One integration step in its own transaction; never integrates a record twice. */
export async function integrateStaged(
  trx: Transaction<Database>,
  now: () => Date,
): Promise<Integrated> {
  // One round trip: the bound on this transaction's idle time, then the chain lock.
  await sql`select set_config('idle_in_transaction_session_timeout', ${IDLE_IN_INTEGRATION}, true),
    pg_advisory_xact_lock(${sql.lit(CHAIN_LOCK_KEY.toString())}::bigint)`.execute(trx);
  const staged = await trx
    .selectFrom('audit_staged')
    .selectAll()
    .orderBy('id', 'asc')
    .limit(INTEGRATE_BATCH + 1)
    .execute();
  if (staged.length === 0) return NONE;
  const more = staged.length > INTEGRATE_BATCH;
  if (more) staged.pop();
  const streams = [...new Set(staged.map((s) => s.stream))];
  const heads = new Map<string, StreamHead>();
  for (const h of await trx
    .selectFrom('audit_stream_heads')
    .selectAll()
    .where('stream', 'in', streams)
    .execute()) {
    heads.set(h.stream, { rseq: Number(h.rseq), hash: h.hash });
  }
  const at = now();
  const stamp = at.toISOString();
  const rows: UnchainedRow[] = [];
  let breaks = 0;
  let oldest: number | null = null;
  for (const s of staged) {
    const row = { ...s, rseq: Number(s.rseq) };
    const head = heads.get(row.stream) ?? STREAM_GENESIS;
    const problem = stagedBreak(head, row);
    const stagedAt = Date.parse(row.staged_at);
    if (Number.isFinite(stagedAt)) oldest = Math.min(oldest ?? stagedAt, stagedAt);
    if (problem !== null) {
      breaks += 1;
      rows.push(breakAlert(stamp, problem, row, head));
      if (problem === 'repeated') continue;
    }
    const record = recordOf(row.record);
    // Content that is no audit record (changed so, its hash matching or not), or holds a value
    // its column cannot (audit-record.ts), is not inserted:
    // the alert stands for it, and the log goes on.
    if (record) rows.push(record);
    else if (problem === null) rows.push(breakAlert(stamp, 'altered', row, head));
    heads.set(row.stream, { rseq: row.rseq, hash: row.hash });
  }
  if (rows.length > 0) {
    const chained = linkInPlace(await readHead(trx), rows);
    await insertChained(trx, chained, 'numbered');
  }
  await trx
    .deleteFrom('audit_staged')
    .where(
      'id',
      'in',
      staged.map((s) => s.id),
    )
    .execute();
  for (const stream of streams) {
    const head = heads.get(stream);
    if (!head) continue;
    await trx
      .insertInto('audit_stream_heads')
      .values({ stream, rseq: head.rseq, hash: head.hash, integrated_at: stamp })
      .onConflict((oc) =>
        oc.column('stream').doUpdateSet({ rseq: head.rseq, hash: head.hash, integrated_at: stamp }),
      )
      .execute();
  }
  return { count: rows.length, oldestStagedAt: oldest, breaks, more };
}
