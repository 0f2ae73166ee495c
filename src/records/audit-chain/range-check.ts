/**
 * @module What a verify worker checks of one range of the log (docs/architecture.md C12, "Verify
 * in parallel"): records from+1..to, read as arrays of values. Pure: the chain's hashing only.
 * A range is clean when every record is there in order, well formed, matches its hash and links
 * to the one before it; then only its Merkle subtrees and the first record's link go back, and
 * the caller checks the links between ranges and builds the tree from the subtrees. Anything
 * else is not clean and the caller checks that range again record by record, so every finding is
 * named exactly as the sequential check names it.
 *
 * Each record's leaf input is written into one reused buffer (record-bytes.ts) and hashed there:
 * no string is built per record. The subtrees: level 0 holds the records' hashes (the tree's
 * leaves), level j the hashes of the perfect subtrees of 2^j leaves that start at a multiple of
 * 2^j within the range; levels go only as high as `from` is a multiple of 2^j, so each node is
 * also a node of the whole log's tree. All levels share one ArrayBuffer, moved to the caller.
 */
import {
  type ByteOrder,
  byteOrder,
  RecordEncoder,
  sha256HexOf,
  sha256Into,
} from './record-bytes.js';
import { type ColumnOrder, recordHashOfValues } from './record-hash.js';

export type RangeResult =
  | {
      readonly clean: true;
      readonly count: number;
      /** The prev_hash of record from+1: it must be the hash of record `from`. */
      readonly firstPrev: string;
      /** The records' hashes, 32 bytes each, in seq order (the tree's leaves). */
      readonly leaves: Uint8Array;
      /**
       * levels[j-1]: the nodes of level j (j ≥ 1), 32 bytes each, left to right; node m covers
       * leaves m·2^j..(m+1)·2^j - 1 of the range. Absent: leaves only.
       */
      readonly levels?: readonly Uint8Array[];
    }
  | { readonly clean: false };

const HEX64 = /^[0-9a-f]{64}$/;

export interface RangeColumns {
  readonly order: ColumnOrder;
  readonly bytes: ByteOrder;
  readonly seq: number;
  readonly prevHash: number;
  readonly hash: number;
}

export function rangeColumns(order: ColumnOrder, names: readonly string[]): RangeColumns | null {
  const seq = names.indexOf('seq');
  const prevHash = names.indexOf('prev_hash');
  const hash = names.indexOf('hash');
  return seq < 0 || prevHash < 0 || hash < 0
    ? null
    : { order, bytes: byteOrder(order), seq, prevHash, hash };
}

const encoder = new RecordEncoder();

/** How many levels above the leaves a range of `count` records after `from` has. */
function heightOf(from: number, count: number): number {
  let height = 0;
  let span = 2;
  // A node of level j must start at a multiple of 2^j in the whole tree: from is one, so is
  // every multiple of 2^j after it.
  while (span <= count && from % span === 0) {
    height += 1;
    span *= 2;
  }
  return height;
}

export function checkRange(
  rows: readonly (readonly unknown[])[],
  columns: RangeColumns,
  from: number,
  to: number,
): RangeResult {
  const count = to - from;
  if (rows.length !== count || count <= 0) return { clean: false };
  const height = heightOf(from, count);
  let nodes = 0;
  for (let j = 1; j <= height; j++) nodes += Math.floor(count / 2 ** j);
  const memory = new ArrayBuffer((count + nodes) * 32);
  const leaves = Buffer.from(memory, 0, count * 32);
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
    const length = encoder.encode(columns.bytes, values);
    const actual =
      length < 0
        ? recordHashOfValues(columns.order, values)
        : sha256HexOf(encoder.bytes.subarray(0, length));
    // Equal to a SHA-256 in lowercase hex, so itself one: the next link needs no other check.
    if (actual !== hash) return { clean: false };
    leaves.write(hash, i * 32, 32, 'hex');
    previous = hash;
  }
  return { clean: true, count, firstPrev, leaves, levels: buildLevels(memory, count, height) };
}

const nodeInput = Buffer.alloc(65);

/** Fills the levels above the leaves (RFC 9162 nodes: SHA-256(0x01 || left || right)). */
function buildLevels(memory: ArrayBuffer, count: number, height: number): Uint8Array[] {
  const levels: Uint8Array[] = [];
  let below = Buffer.from(memory, 0, count * 32);
  let offset = count * 32;
  let width = count;
  nodeInput[0] = 1;
  for (let j = 1; j <= height; j++) {
    width = Math.floor(width / 2);
    const level = Buffer.from(memory, offset, width * 32);
    for (let m = 0; m < width; m++) {
      below.copy(nodeInput, 1, 2 * m * 32, 2 * m * 32 + 64);
      sha256Into(nodeInput, level, m * 32);
    }
    levels.push(level);
    below = level;
    offset += width * 32;
  }
  return levels;
}
