/**
 * @module Idempotency keys: their scope (principal and tool), lookup, claim, stored result and
 * sweep. Anything exported here is public API.
 */
export { idempotencyScope } from './idempotency-scope.js';
export type { IdempotencyOutcome } from './idempotency-store.js';
export { IDEMPOTENCY_TTL_MS, IdempotencyStore, isIdempotencyKey } from './idempotency-store.js';
