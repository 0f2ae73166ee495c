/**
 * @module The tamper-evident audit log (C12): chained records, RFC 9162 Merkle
 * tree, Ed25519-signed checkpoints (C2SP tlog-checkpoint), proofs, verification and export
 * bundles. Anything exported here is public API.
 */
export type { ChainHead, UnchainedRow } from './audit-chain.js';
export { appendChained, chainRows, eventAuditRow } from './audit-chain.js';
export type {
  AuditLogOptions,
  CheckpointView,
  ConsistencyProof,
  InclusionProof,
} from './audit-log.js';
export { AuditLog, DEFAULT_ORIGIN } from './audit-log.js';
export type { AuditKind, AuditRecord, AuditWriterOptions } from './audit-writer.js';
export { AuditWriter } from './audit-writer.js';
export type { BundleReport } from './bundle-verifier.js';
export { verifyBundle } from './bundle-verifier.js';
export type {
  ChainRow,
  CheckpointRow,
  Problem,
  ProblemKind,
  VerifyReport,
} from './log-verifier.js';
export { LogVerifier } from './log-verifier.js';
export {
  EMPTY_ROOT,
  leafHash,
  MerkleFrontier,
  MerkleTree,
  nodeHash,
  verifyConsistency,
  verifyInclusion,
} from './merkle.js';
export { GENESIS_PREV_HASH, recordBytes, recordHash } from './record-hash.js';
export type { CheckpointBody, NoteCheck, NoteVerifier } from './signed-note.js';
export {
  checkpointText,
  generateNoteSigner,
  NoteSigner,
  openNote,
  parseCheckpointText,
  parseVerifierKey,
  verifierKeyText,
} from './signed-note.js';
