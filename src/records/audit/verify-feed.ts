/**
 * @module How a verification reads the log (docs/architecture.md §5): records in seq order, in
 * large pages, into a LogVerifier. Where the store can check ranges off this thread (an SQLite
 * file) and the records are exactly 1..n, records 1..n are checked in parallel first (the store's
 * RangeChecker) and a range found clean is taken
 * whole; every other range, and what was appended after the start, goes record by record, so a
 * finding is named as the sequential check names it.
 */
import type { Kysely } from 'kysely';
import { isStoreCorrupt } from '../../core/index.js';
import type { Database, RangeChecker, Store } from '../store/index.js';
import type { ChainRow, LogVerifier, VerifyReport } from './log-verifier.js';

const PAGE = 5000;
/**
 * Records per parallel range; logs shorter than two ranges are read on this thread alone. A power
 * of two, so each whole range is one subtree of the log's tree and comes back as one node.
 */
export const PARALLEL_RANGE = 8192;

export interface FeedSource {
  page(after: number, limit: number): Promise<ChainRow[]>;
  /** The store's parallel range check, where it has one. */
  readonly ranges: RangeChecker | null;
  /** How many records there are and the largest seq, read once at the start. */
  extent(): Promise<{ count: number; last: number }>;
  /** The reason a store-corrupt error gives (core's wording). */
  corruptReason(err: unknown): string;
}

export interface FeedOptions {
  /** False: this thread alone (what the parallel check is compared with in tests). */
  readonly parallel?: boolean;
  /** Records per range (tests make it small). */
  readonly range?: number;
  readonly workers?: number;
}

/** What the log needs of its store: the database, the audit slot, and its range check if any. */
export type AuditStore = Pick<Store, 'db' | 'audit'> & Partial<Pick<Store, 'ranges'>>;

export interface VerifyOptions extends FeedOptions {
  /** Verifier keys trusted for the checkpoints; this log's own signer when absent. */
  readonly keys?: readonly string[];
}

/** A verification's report, and how many records worker threads checked (the rest: this one). */
export type LogReport = VerifyReport & { readonly checkedInParallel: number };

/** Feeds every record to `verifier`; answers how many were checked by workers. */
export async function feedLog(
  verifier: LogVerifier,
  source: FeedSource,
  options: FeedOptions = {},
): Promise<{ parallel: number }> {
  let after = 0;
  let parallel = 0;
  let stopped = false;
  const range = options.range ?? PARALLEL_RANGE;
  if (source.ranges !== null && options.parallel !== false) {
    const { count, last } = await source.extent();
    // A log that is not exactly 1..n (a gap, an extra row, a far seq) is read in order: the
    // sequential check names what is wrong, and no range plan is made from a forged seq.
    if (count === last && last >= 2 * range) {
      await source.ranges.each(
        {
          last,
          range,
          ...(options.workers ? { workers: options.workers } : {}),
        },
        async (from, to, result) => {
          if (stopped) return;
          if (result.clean && verifier.pushRange(from, result)) {
            parallel += result.count;
            return;
          }
          stopped = await feedInOrder(verifier, source, from, to);
        },
      );
      after = last;
    }
  }
  if (!stopped) await feedInOrder(verifier, source, after, Number.POSITIVE_INFINITY);
  return { parallel };
}

/**
 * Records after `after` up to seq `to`, in pages; true when the store could not be read on (the
 * verifier has the finding, and nothing after it is checked).
 */
async function feedInOrder(
  verifier: LogVerifier,
  source: FeedSource,
  after: number,
  to: number,
): Promise<boolean> {
  let size = PAGE;
  for (;;) {
    let rows: ChainRow[];
    try {
      rows = await source.page(after, Math.min(size, Number.isFinite(to) ? to - after : size));
    } catch (err) {
      if (!isStoreCorrupt(err)) throw err;
      // A damaged page somewhere in this batch: read on one record at a time, so the report
      // names the last record that could be read and checked.
      if (size > 1) {
        size = 1;
        continue;
      }
      verifier.storeCorrupt(source.corruptReason(err));
      return true;
    }
    for (const row of rows) {
      if (Number(row.seq) > to) return false;
      verifier.push(row);
    }
    const last = rows[rows.length - 1];
    if (!last || rows.length < size || Number(last.seq) >= to) return false;
    after = Number(last.seq);
  }
}

/** How many records the log holds and its largest seq; a damaged file reads as no plan. */
export async function logExtent(db: Kysely<Database>): Promise<{ count: number; last: number }> {
  try {
    const row = await db
      .selectFrom('audit_log')
      .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.max('seq').as('last')])
      .executeTakeFirst();
    return { count: Number(row?.count ?? 0), last: Number(row?.last ?? 0) };
  } catch (err) {
    // A damaged file is read in order, which names the damage.
    if (!isStoreCorrupt(err)) throw err;
    return { count: 0, last: -1 };
  }
}
