/**
 * @module Step 10, idempotency claim: once the call may run (approved, or needing no approval),
 * its key is taken; a call that took the key meanwhile is replayed or refused as in step 8.
 * Step order: docs/architecture.md §3.
 */
import { settle } from './idempotency-lookup.js';
import { type CallState, CONTINUE, type StepResult } from './step.js';

export function idempotencyClaimStep(s: CallState): StepResult | Promise<StepResult> {
  return s.idemKey === null ? CONTINUE : claim(s, s.idemKey);
}

async function claim(s: CallState, key: string): Promise<StepResult> {
  return settle(s, await s.deps.idempotency.claim(key, s.argsHash, s.callId, s.now));
}
