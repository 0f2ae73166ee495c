/**
 * @module The `idempotency-claim` step: once the call may run (approved, or needing no approval),
 * its key is taken; a call that took the key meanwhile is replayed or refused as in step `idempotency-lookup`. The
 * claim lasts only if the call runs: a refusal after it (the `limits` step) or a stop before the
 * tool starts gives the key back (`releaseClaim`), so a refused call never holds a key.
 * Step order: docs/architecture.md §3.
 */
import { settle } from './idempotency-lookup.js';
import { type CallState, CONTINUE, type StepResult } from './step.js';

export function idempotencyClaimStep(s: CallState): StepResult | Promise<StepResult> {
  return s.idemKey === null ? CONTINUE : claim(s, s.idemKey);
}

async function claim(s: CallState, key: string): Promise<StepResult> {
  const outcome = await s.deps.idempotency.claim(
    key,
    s.argsHash,
    s.callId,
    s.now,
    s.def.sandbox.limits.wall_time_ms,
  );
  if (outcome.kind === 'claimed') s.claimHeld = true;
  return settle(s, outcome);
}

/**
 * Gives this call's key back when nothing ran under it: a refusal after the claim, a store error
 * before the tool started, a failure before the runtime was reached. Only this call's own
 * unfinished claim is removed (IdempotencyStore.release).
 */
export async function releaseClaim(s: CallState): Promise<void> {
  if (!s.claimHeld || s.idemKey === null) return;
  s.claimHeld = false;
  await s.deps.idempotency.release(s.idemKey, s.callId);
}
