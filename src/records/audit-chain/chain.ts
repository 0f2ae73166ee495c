/**
 * @module Linking audit records into one hash chain. Pure: no database, no store import. The
 * store's dialect slots (src/records/store/sqlite/audit-append.ts, src/records/store/postgres/audit-append.ts)
 * take the chain lock, read the head and insert what this module links; the audit log and its
 * verifiers check what it produced. Record seq n has prev_hash = hash of record n-1 (64 zeros
 * for seq 1) and hash = recordHash of its columns: docs/architecture.md §5.
 */
import { GENESIS_PREV_HASH, recordHash } from './record-hash.js';

/** The last record of a chain: the next one gets seq + 1 and prev_hash = hash. */
export interface ChainHead {
  readonly seq: number;
  readonly hash: string;
}

/** The head of an empty chain. */
export const GENESIS_HEAD: ChainHead = { seq: 0, hash: GENESIS_PREV_HASH };

/** What linking adds to a record's columns. */
export interface ChainLinks {
  seq: number;
  prev_hash: string;
  hash: string;
}

/** Gives each row its seq, prev_hash and hash onto `head`; the rows given are not changed. */
export function chainRows<T extends object>(
  head: ChainHead,
  rows: readonly T[],
): (T & ChainLinks)[] {
  return linkInPlace(
    head,
    rows.map((row) => ({ ...row })),
  );
}

/**
 * chainRows on rows the caller owns: each is completed where it is and returned, so a group
 * commit of hundreds of records copies none of them.
 */
export function linkInPlace<T extends object>(head: ChainHead, rows: T[]): (T & ChainLinks)[] {
  let prev = head.hash;
  for (let i = 0; i < rows.length; i++) {
    const linked = rows[i] as Record<string, unknown>;
    linked.seq = head.seq + 1 + i;
    linked.prev_hash = prev;
    prev = recordHash(linked);
    linked.hash = prev;
  }
  return rows as (T & ChainLinks)[];
}

/**
 * The seq of the first row that does not continue the chain from `head` (wrong seq, wrong link,
 * or a hash its columns do not give), or null when every row does.
 */
export function firstBreak(
  head: ChainHead,
  rows: readonly Readonly<Record<string, unknown>>[],
): number | null {
  let { seq, hash } = head;
  for (const row of rows) {
    const at = Number(row.seq);
    if (at !== seq + 1 || row.prev_hash !== hash || recordHash(row) !== row.hash) return seq + 1;
    seq = at;
    hash = String(row.hash);
  }
  return null;
}
