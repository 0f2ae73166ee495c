/**
 * @module Idempotency keys: their scope (principal and tool), lookup, claim, release, stored
 * result or failure, the outcome a key's owner may ask for, and sweep. Anything exported here is
 * public API.
 */
export { type IdempotencyOwner, idempotencyScope } from './idempotency-scope.js';
export type { IdempotencyFailure, IdempotencyOutcome, KeyOutcome } from './idempotency-store.js';
export {
  IDEMPOTENCY_GRACE_MS,
  IDEMPOTENCY_TTL_MS,
  IdempotencyStore,
  isIdempotencyKey,
} from './idempotency-store.js';
export type { KeyOutcomeView, KeyOwner } from './key-outcome.js';
export { keyOutcome } from './key-outcome.js';
export { SessionCallOutcomes } from './session-call-outcome.js';
