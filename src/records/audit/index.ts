/**
 * @module The tamper-evident audit log (C12): chained records, RFC 9162 Merkle tree,
 * Ed25519-signed checkpoints (C2SP tlog-checkpoint), proofs, verification and export bundles.
 * Anything exported here is public API; the record format (hashing and linking, from
 * ../audit-chain/) is part of it, since an offline verifier needs it.
 */
export type { ChainHead } from '../audit-chain/index.js';
export { chainRows, GENESIS_PREV_HASH, recordBytes, recordHash } from '../audit-chain/index.js';
export type {
  AuditLogOptions,
  CheckpointView,
  ConsistencyProof,
  InclusionProof,
} from './audit-log.js';
export { AuditLog, DEFAULT_ORIGIN } from './audit-log.js';
export {
  AuditPseudonyms,
  canonicalForm,
  declaredPropertyNames,
  PSEUDONYM_KEY_LABEL,
  PSEUDONYM_PREFIX,
} from './audit-pseudonyms.js';
export type { AuditEntry, AuditRecordDetail, AuditSearchFilter } from './audit-search.js';
export { AuditSearch } from './audit-search.js';
export type { AuditKind, AuditRecord, AuditWriterOptions } from './audit-writer.js';
export { AuditWriter } from './audit-writer.js';
export type { BundleReport } from './bundle-verifier.js';
export { verifyBundle } from './bundle-verifier.js';
export type {
  ClassifiedOptions,
  ClassifiedRecord,
  ClassifiedSearch,
  ClassifiedSelector,
} from './classified-arguments.js';
export {
  ClassifiedArguments,
  checkSelector,
  DEFAULT_CLASSIFIED_RETENTION_DAYS,
  MIN_VALUE_LENGTH,
} from './classified-arguments.js';
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
export type { AuditStore, LogReport, VerifyOptions } from './verify-feed.js';
