/**
 * @module What a verify worker checks of one range of the log (docs/architecture.md C12, "Verify
 * in parallel"): records from+1..to, read as arrays of values. Pure: the chain's hashing only.
 * A range is clean when every record is there in order, well formed, matches its hash and links
 * to the one before it; then only the leaf hashes and the first record's link go back, and the
 * caller checks the links between ranges and builds the tree. Anything else is not clean and
 * the caller checks that range again record by record, so every finding is named exactly as the
 * sequential check names it.
 */
import { type ColumnOrder, recordHashOfValues } from './record-hash.js';

export type RangeResult =
  | {
      readonly clean: true;
      readonly count: number;
      /** The prev_hash of record from+1: it must be the hash of record `from`. */
      readonly firstPrev: string;
      /** The records' hashes, 32 bytes each, in seq order (the tree's leaves). */
      readonly leaves: Uint8Array;
    }
  | { readonly clean: false };

const HEX64 = /^[0-9a-f]{64}$/;

export interface RangeColumns {
  readonly order: ColumnOrder;
  readonly seq: number;
  readonly prevHash: number;
  readonly hash: number;
}

export function rangeColumns(order: ColumnOrder, names: readonly string[]): RangeColumns | null {
  const seq = names.indexOf('seq');
  const prevHash = names.indexOf('prev_hash');
  const hash = names.indexOf('hash');
  return seq < 0 || prevHash < 0 || hash < 0 ? null : { order, seq, prevHash, hash };
}

export function checkRange(
  rows: readonly (readonly unknown[])[],
  columns: RangeColumns,
  from: number,
  to: number,
): RangeResult {
  const count = to - from;
  if (rows.length !== count || count <= 0) return { clean: false };
  const leaves = Buffer.alloc(count * 32);
  let previous: string | null = null;
  let firstPrev = '';
  for (let i = 0; i < count; i++) {
    const values = rows[i] as readonly unknown[];
    const hash = values[columns.hash];
    const prev = values[columns.prevHash];
    if (values[columns.seq] !== from + 1 + i || typeof hash !== 'string') return { clean: false };
    if (previous === null) {
      if (typeof prev !== 'string' || !HEX64.test(prev)) return { clean: false };
      firstPrev = prev;
    } else if (prev !== previous) {
      return { clean: false };
    }
    // Equal to a SHA-256 in lowercase hex, so itself one: the next link needs no other check.
    if (recordHashOfValues(columns.order, values) !== hash) return { clean: false };
    leaves.write(hash, i * 32, 32, 'hex');
    previous = hash;
  }
  return { clean: true, count, firstPrev, leaves };
}
