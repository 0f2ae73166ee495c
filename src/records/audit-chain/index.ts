/**
 * @module The audit chain's arithmetic, pure (hashing a record, linking records): shared by the
 * store, which writes the chain, and the audit log, which verifies and proves it. Imports core
 * only, so neither of the two imports the other's internals: docs/architecture.md §5.
 */
export type { ChainHead, ChainLinks } from './chain.js';
export { chainRows, firstBreak, GENESIS_HEAD, linkInPlace } from './chain.js';
export type { RangeColumns, RangeResult } from './range-check.js';
export { checkRange, rangeColumns } from './range-check.js';
export type { ByteOrder } from './record-bytes.js';
export { byteOrder, RecordEncoder, sha256HexOf } from './record-bytes.js';
export type { ColumnOrder, RecordColumns } from './record-hash.js';
export {
  columnOrder,
  GENESIS_PREV_HASH,
  recordBytes,
  recordBytesReference,
  recordHash,
  recordHashOfValues,
} from './record-hash.js';
export type { StagedBreak, StreamHead } from './staged-hash.js';
export { STAGING_RULE, STREAM_GENESIS, stagedBreak, stagedHash } from './staged-hash.js';
