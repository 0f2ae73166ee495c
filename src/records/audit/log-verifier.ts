/**
 * @module The standalone audit verifier: it recomputes the hash chain, the Merkle tree and every
 * checkpoint from records handed to it in seq order, and names the first bad record. It depends on
 * nothing but node:crypto and canonicalize (through its sibling pure modules), so the same code
 * checks the live database and an exported bundle on a machine without toolgate's database.
 */

import { GENESIS_PREV_HASH, recordHash, STAGING_RULE } from '../audit-chain/index.js';
import { MerkleFrontier } from './merkle.js';
import { type NoteVerifier, openNote, parseCheckpointText } from './signed-note.js';

export interface ChainRow {
  readonly seq: number;
  readonly prev_hash: string | null;
  readonly hash: string | null;
  readonly [column: string]: unknown;
}

export interface CheckpointRow {
  readonly tree_size: number;
  readonly root_hash: string;
  readonly note: string;
  readonly [column: string]: unknown;
}

export type ProblemKind =
  | 'record_missing'
  | 'record_out_of_order'
  | 'record_malformed'
  | 'record_hash_mismatch'
  | 'chain_broken'
  /** The sequencer found a staged record removed, changed or repeated (its alert is here). */
  | 'staged_record_broken'
  | 'checkpoint_malformed'
  | 'checkpoint_signature'
  | 'checkpoint_root_mismatch'
  | 'checkpoint_beyond_log'
  | 'store_corrupt';

export interface Problem {
  readonly kind: ProblemKind;
  /** The record where the log stops being trustworthy, when one can be named. */
  readonly seq: number | null;
  /** The checkpoint's tree size, for checkpoint problems. */
  readonly treeSize?: number;
  readonly message: string;
}

export interface VerifyReport {
  readonly ok: boolean;
  readonly records: number;
  readonly firstSeq: number | null;
  readonly lastSeq: number | null;
  readonly checkpoints: number;
  /** Largest tree size covered by a good checkpoint. */
  readonly signedSize: number;
  /** Records after the last good checkpoint: chained, but not yet under a signature. */
  readonly unsignedRecords: number;
  /**
   * The last seq up to which every record checked out (the one before the first problem's record;
   * 0 when the first record is already bad; null when no record can be named).
   */
  readonly lastGoodSeq: number | null;
  /** The earliest problem; problems are capped at MAX_PROBLEMS. */
  readonly firstProblem: Problem | null;
  readonly problems: readonly Problem[];
}

const MAX_PROBLEMS = 50;
const HEX64 = /^[0-9a-f]{64}$/;

export interface VerifierOptions {
  readonly verifiers: readonly NoteVerifier[];
  /** Checkpoints must name this origin; any origin when absent. */
  readonly origin?: string;
  /** Where a partial range starts: the tree before its first record, and that record's prev_hash. */
  readonly start?: { readonly frontier: MerkleFrontier; readonly prevHash: string };
}

interface PendingCheckpoint {
  readonly row: CheckpointRow;
  readonly size: number;
  readonly root: Buffer;
  readonly index: number;
}

export class LogVerifier {
  readonly #opts: VerifierOptions;
  readonly #frontier: MerkleFrontier;
  #prevHash: string;
  #expectSeq: number;
  #records = 0;
  #firstSeq: number | null = null;
  #lastSeq: number | null = null;
  /** Set once the chain is broken: later roots cannot match and are not separate findings. */
  #broken = false;
  readonly #problems: Problem[] = [];
  /** Checkpoints waiting for the tree to reach their size, smallest first. */
  #pending: PendingCheckpoint[] = [];
  #checked = 0;
  #signedSize = 0;

  constructor(options: VerifierOptions, checkpoints: readonly CheckpointRow[]) {
    this.#opts = options;
    this.#frontier = options.start?.frontier ?? new MerkleFrontier();
    this.#prevHash = options.start?.prevHash ?? GENESIS_PREV_HASH;
    this.#expectSeq = this.#frontier.size + 1;
    checkpoints.forEach((row, index) => {
      const parsed = this.#openCheckpoint(row, index);
      if (parsed) this.#pending.push({ row, ...parsed, index });
    });
    this.#pending.sort((a, b) => a.size - b.size);
    this.#checkReached();
  }

  #problem(p: Problem): void {
    if (this.#problems.length < MAX_PROBLEMS) this.#problems.push(p);
  }

  #openCheckpoint(row: CheckpointRow, index: number): { size: number; root: Buffer } | null {
    const where = `checkpoint #${index + 1} (tree size ${row.tree_size})`;
    const opened = openNote(String(row.note), this.#opts.verifiers);
    if (!opened.ok) {
      this.#problem({
        kind: 'checkpoint_signature',
        seq: null,
        treeSize: Number(row.tree_size),
        message: `${where}: ${opened.reason}`,
      });
      return null;
    }
    const body = parseCheckpointText(opened.text);
    if (!body) {
      this.#problem({
        kind: 'checkpoint_malformed',
        seq: null,
        treeSize: Number(row.tree_size),
        message: `${where}: the signed text is not a checkpoint`,
      });
      return null;
    }
    if (this.#opts.origin !== undefined && body.origin !== this.#opts.origin) {
      this.#problem({
        kind: 'checkpoint_malformed',
        seq: null,
        treeSize: body.size,
        message: `${where}: origin "${body.origin}" is not this log's "${this.#opts.origin}"`,
      });
      return null;
    }
    if (body.size !== Number(row.tree_size) || body.root.toString('hex') !== row.root_hash) {
      this.#problem({
        kind: 'checkpoint_malformed',
        seq: null,
        treeSize: body.size,
        message: `${where}: its columns differ from its signed text`,
      });
      return null;
    }
    if (body.size < this.#frontier.size) {
      // Before the range handed to us (a bundle's left context): nothing to compare it with.
      return null;
    }
    return { size: body.size, root: body.root };
  }

  #checkReached(): void {
    while (this.#pending.length > 0 && (this.#pending[0]?.size ?? 0) <= this.#frontier.size) {
      const cp = this.#pending.shift() as PendingCheckpoint;
      if (this.#broken) continue;
      if (!this.#frontier.root().equals(cp.root)) {
        this.#broken = true;
        const since = this.#signedSize;
        this.#problem({
          kind: 'checkpoint_root_mismatch',
          seq: since + 1,
          treeSize: cp.size,
          message: `checkpoint #${cp.index + 1} signed a different tree of ${cp.size} records: records ${since + 1}..${cp.size} were rewritten (each still chains; the signed root does not match)`,
        });
        continue;
      }
      this.#checked += 1;
      this.#signedSize = Math.max(this.#signedSize, cp.size);
    }
  }

  get lastSeq(): number | null {
    return this.#lastSeq;
  }

  /** Feeds the next record (seq order). */
  push(row: ChainRow): void {
    const seq = Number(row.seq);
    this.#records += 1;
    this.#firstSeq ??= seq;
    this.#lastSeq = seq;
    if (!Number.isInteger(seq) || seq < this.#expectSeq) {
      this.#broken = true;
      this.#problem({
        kind: 'record_out_of_order',
        seq: this.#expectSeq,
        message: `record ${seq} came where record ${this.#expectSeq} belongs`,
      });
      return;
    }
    if (seq > this.#expectSeq) {
      this.#broken = true;
      const last = seq - 1;
      this.#problem({
        kind: 'record_missing',
        seq: this.#expectSeq,
        message:
          last === this.#expectSeq
            ? `record ${this.#expectSeq} is missing`
            : `records ${this.#expectSeq}..${last} are missing`,
      });
      // Keep checking what follows against the tree as it now stands: every root after is wrong.
      this.#expectSeq = seq;
    }
    const stored = row.hash;
    if (
      typeof stored !== 'string' ||
      !HEX64.test(stored) ||
      typeof row.prev_hash !== 'string' ||
      !HEX64.test(row.prev_hash)
    ) {
      this.#broken = true;
      this.#problem({
        kind: 'record_malformed',
        seq,
        message: `record ${seq} has no well-formed hash or prev_hash`,
      });
      this.#expectSeq = seq + 1;
      return;
    }
    let actual: string;
    try {
      actual = recordHash(row);
    } catch {
      actual = '';
    }
    if (actual !== stored) {
      this.#broken = true;
      this.#problem({
        kind: 'record_hash_mismatch',
        seq,
        message: this.#explainMismatch(row, seq),
      });
    } else if (row.prev_hash !== this.#prevHash) {
      this.#broken = true;
      this.#problem({
        kind: 'chain_broken',
        seq,
        message: `record ${seq} links to a record ${seq - 1} other than the one stored (prev_hash differs): record ${seq - 1} was replaced, or record ${seq} was re-linked`,
      });
    }
    if (row.kind === 'alert' && row.rule === STAGING_RULE) {
      // The chain holds, but a record staged before this point was lost or changed before it
      // was integrated (docs/architecture.md §5, "The audit log across replicas").
      this.#problem({
        kind: 'staged_record_broken',
        seq,
        message: `record ${seq}: ${typeof row.message === 'string' ? row.message : 'a staged record was lost or changed'}`,
      });
    }
    this.#prevHash = stored;
    this.#frontier.append(Buffer.from(stored, 'hex'));
    this.#expectSeq = seq + 1;
    this.#checkReached();
  }

  /**
   * Takes a range a worker found clean (audit-chain/range-check.ts): records from+1..from+count,
   * each matching its hash and linked to the one before it. Taken only when it starts where the
   * log stands and links to the record before it; false otherwise, and nothing is taken (the
   * caller feeds the range's records through push, which names what is wrong). The tree grows
   * by the range's largest subtrees, stopping at every checkpoint's size to compare its root.
   */
  pushRange(
    from: number,
    range: {
      count: number;
      firstPrev: string;
      leaves: Uint8Array;
      levels?: readonly Uint8Array[];
    },
  ): boolean {
    if (from + 1 !== this.#expectSeq || range.firstPrev !== this.#prevHash || this.#broken) {
      return false;
    }
    const levels = [range.leaves, ...(range.levels ?? [])].map((l) =>
      Buffer.from(l.buffer, l.byteOffset, l.byteLength),
    );
    let done = 0;
    while (done < range.count) {
      // Up to the next checkpoint inside the range, or the range's end.
      const next = this.#pending[0]?.size ?? Number.POSITIVE_INFINITY;
      const stop = Math.min(range.count, next - from);
      while (done < stop) {
        let level = levels.length - 1;
        while (level > 0 && (done % 2 ** level !== 0 || done + 2 ** level > stop)) level -= 1;
        const index = done / 2 ** level;
        const node = (levels[level] as Buffer).subarray(index * 32, index * 32 + 32);
        this.#frontier.appendSubtree(node, level);
        done += 2 ** level;
      }
      this.#checkReached();
    }
    const leaves = levels[0] as Buffer;
    this.#records += range.count;
    this.#firstSeq ??= from + 1;
    this.#lastSeq = from + range.count;
    this.#expectSeq = from + range.count + 1;
    this.#prevHash = leaves.subarray((range.count - 1) * 32, range.count * 32).toString('hex');
    return true;
  }

  /**
   * The store could not hand over the next record because its file is damaged: everything from
   * the next expected seq on is unchecked, and later checkpoints cannot be compared.
   */
  storeCorrupt(reason: string): void {
    const next = this.#expectSeq;
    this.#broken = true;
    this.#problem({
      kind: 'store_corrupt',
      seq: next,
      message: `the database could not be read after record ${next - 1} (${reason}): records from ${next} on are unchecked; the last good record is ${next - 1}`,
    });
  }

  /** Extends the tree with leaf hashes only (a bundle's right context up to its checkpoint). */
  pushLeaf(hashHex: string): void {
    if (!HEX64.test(hashHex)) throw new TypeError('leaf hashes are 64 lowercase hex digits');
    this.#frontier.append(Buffer.from(hashHex, 'hex'));
    this.#expectSeq += 1;
    this.#checkReached();
  }

  #explainMismatch(row: ChainRow, seq: number): string {
    for (const other of [seq - 1, seq + 1]) {
      if (other >= 1 && recordHash({ ...row, seq: other }) === row.hash) {
        return other < seq
          ? `record ${seq} was stored as record ${other}: a record was inserted before it (or rows renumbered)`
          : `record ${seq} was stored as record ${other}: a record before it was removed and the rest renumbered`;
      }
    }
    return `record ${seq} does not match its hash: a field was changed, or rows were moved`;
  }

  finish(): VerifyReport {
    // A damaged store leaves its pending checkpoints unchecked, not "beyond the log".
    if (this.#problems.some((p) => p.kind === 'store_corrupt')) this.#pending = [];
    for (const cp of this.#pending) {
      this.#problem({
        kind: 'checkpoint_beyond_log',
        seq: this.#frontier.size + 1,
        treeSize: cp.size,
        message: `checkpoint #${cp.index + 1} signed ${cp.size} records but the log ends at ${this.#frontier.size}: records ${this.#frontier.size + 1}..${cp.size} are missing (tail truncated)`,
      });
    }
    this.#pending = [];
    const problems = [...this.#problems].sort(
      (a, b) => (a.seq ?? Number.MAX_SAFE_INTEGER) - (b.seq ?? Number.MAX_SAFE_INTEGER),
    );
    return {
      ok: problems.length === 0,
      records: this.#records,
      firstSeq: this.#firstSeq,
      lastSeq: this.#lastSeq,
      checkpoints: this.#checked,
      signedSize: this.#signedSize,
      unsignedRecords: Math.max(0, this.#frontier.size - this.#signedSize),
      lastGoodSeq:
        problems.length === 0
          ? this.#lastSeq
          : problems[0]?.seq !== null && problems[0]?.seq !== undefined
            ? problems[0].seq - 1
            : null,
      firstProblem: problems[0] ?? null,
      problems,
    };
  }
}
