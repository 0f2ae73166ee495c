/**
 * @module The link of a staged audit record (docs/architecture.md §5, "The audit log across
 * replicas"). Pure: node:crypto only. Each writer (one process's audit slot) numbers what it
 * stages in its own stream, 1, 2, 3…, and links every staged record to the one before it in that
 * stream; the sequencer recomputes the link before it puts the record in the chain, so a staged
 * record changed, removed or put in twice between staging and integration is found.
 *
 * hash = SHA-256(0x02 || stream || "\n" || rseq || "\n" || prev_hash || "\n" || record), hex,
 * where `record` is the record's JSON exactly as staged and `prev_hash` is the hash of the
 * stream's record rseq - 1 (64 zeros for rseq 1). The prefix 0x02 keeps these hashes apart from
 * the Merkle tree's leaves (0x00) and nodes (0x01). `stream` is lowercase hex and `rseq` decimal,
 * so no field can run into the next.
 */
import { sha256Hex } from '../../core/canonical-json.js';
import { GENESIS_PREV_HASH } from './record-hash.js';

/**
 * The rule of the `alert` record the sequencer puts in the chain where a stream breaks; `audit
 * verify` reports each such record as a problem of the log.
 */
export const STAGING_RULE = 'audit.staging';

/** Where a stream's next staged record links: the last one staged (or integrated) in it. */
export interface StreamHead {
  readonly rseq: number;
  readonly hash: string;
}

/** The head of a stream that has staged nothing yet. */
export const STREAM_GENESIS: StreamHead = { rseq: 0, hash: GENESIS_PREV_HASH };

export function stagedHash(stream: string, rseq: number, prevHash: string, record: string): string {
  return sha256Hex(`\u0002${stream}\n${rseq}\n${prevHash}\n${record}`);
}

/** Why a staged record does not continue its stream's chain; null when it does. */
export type StagedBreak = 'missing' | 'altered' | 'repeated';

/**
 * Checks one staged record against its stream's head: `repeated` when the stream already went
 * past it (it would be integrated twice), `missing` when records between the head and it are
 * gone, `altered` when its hash is not its content's or it does not link onto the head.
 */
export function stagedBreak(
  head: StreamHead,
  staged: {
    readonly stream: string;
    readonly rseq: number;
    readonly prev_hash: string;
    readonly hash: string;
    readonly record: string;
  },
): StagedBreak | null {
  if (staged.rseq <= head.rseq) return 'repeated';
  if (stagedHash(staged.stream, staged.rseq, staged.prev_hash, staged.record) !== staged.hash)
    return 'altered';
  if (staged.rseq > head.rseq + 1) return 'missing';
  if (staged.prev_hash !== head.hash) return 'altered';
  return null;
}
