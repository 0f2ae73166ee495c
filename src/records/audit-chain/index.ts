/**
 * @module The audit chain's arithmetic, pure (hashing a record, linking records): shared by the
 * store, which writes the chain, and the audit log, which verifies and proves it. Imports core
 * only, so neither of the two imports the other's internals: docs/architecture.md §5.
 */
export type { ChainHead, ChainLinks } from './chain.js';
export { chainRows, firstBreak, GENESIS_HEAD, linkInPlace } from './chain.js';
export type { RecordColumns } from './record-hash.js';
export {
  GENESIS_PREV_HASH,
  recordBytes,
  recordBytesReference,
  recordHash,
} from './record-hash.js';
