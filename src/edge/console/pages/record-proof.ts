/**
 * @module Whether one audit record is provably in the log, checked for its page without reading
 * the whole log: the latest checkpoint's signature opens with this log's key, and the record's own
 * hash, with its inclusion proof, reaches the root that checkpoint signs. (A record after the
 * checkpoint is chained but not yet signed.) The whole-log `verify` is a separate, longer check.
 */
import type { AdminApi } from '../../../api/index.js';
import type { CheckpointView } from '../../../records/audit/index.js';
import { openNote, parseVerifierKey, verifyInclusion } from '../../../records/audit/index.js';

export type RecordProof =
  | { readonly state: 'no-checkpoint' }
  | { readonly state: 'after-checkpoint'; readonly checkpoint: CheckpointView }
  | {
      readonly state: 'proven' | 'unproven';
      readonly checkpoint: CheckpointView;
      readonly signatureOk: boolean;
      readonly inclusionOk: boolean;
    };

const hex = (h: string) => Buffer.from(h, 'hex');

export async function recordProof(
  admin: AdminApi,
  seq: number,
  recordHash: string,
): Promise<RecordProof> {
  const checkpoint = await admin.audit.latestCheckpoint();
  if (!checkpoint) return { state: 'no-checkpoint' };
  if (seq > checkpoint.treeSize) return { state: 'after-checkpoint', checkpoint };
  const key = admin.audit.verifierKey;
  const signatureOk = key !== null && openNote(checkpoint.note, [parseVerifierKey(key)]).ok;
  const proof = await admin.audit.inclusionProof({ seq }, checkpoint.treeSize);
  // The proof path is recomputed here from the record's stored hash up to the signed root.
  const inclusionOk =
    proof.rootHash === checkpoint.rootHash &&
    verifyInclusion(
      seq - 1,
      checkpoint.treeSize,
      hex(recordHash),
      proof.proof.map(hex),
      hex(checkpoint.rootHash),
    );
  return {
    state: signatureOk && inclusionOk ? 'proven' : 'unproven',
    checkpoint,
    signatureOk,
    inclusionOk,
  };
}
