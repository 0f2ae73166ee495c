/**
 * @module The `idempotency-lookup` step: the call's canonical argument hash (what an approval binds
 * and idempotency compares), then, when the caller sent a key, a finished call under it is
 * replayed and the same key with other arguments refused. The key is claimed only once the call
 * may run (step `idempotency-claim`, after its approval), so "pending → approved → retry with the same key" works.
 * Step order: docs/architecture.md §3.
 */
import { argumentsHash } from '../../domain/decisions/index.js';
import {
  type IdempotencyOutcome,
  idempotencyScope,
  isIdempotencyKey,
} from '../../domain/idempotency/index.js';
import type { TrustLabel } from '../../domain/text-trust/index.js';
import { declaredKeys, replayedRecord } from '../audit-records.js';
import { type DenyCode, deny } from '../decision.js';
import { type CallState, CONTINUE, type Refusal, refuse, type StepResult } from './step.js';

const NOT_UNICODE: Refusal = {
  kind: 'refuse',
  code: 'INPUT_INVALID',
  rule: 'schema.unicode',
  message: 'arguments contain text that is not valid Unicode',
};

const BAD_KEY: Refusal = {
  kind: 'refuse',
  code: 'INPUT_INVALID',
  rule: 'idempotency.key',
  message: 'idempotency key must be 1–128 letters, digits, _ . : -',
};

export function idempotencyLookupStep(s: CallState): StepResult | Promise<StepResult> {
  try {
    s.argsHash = argumentsHash(s.callArgs);
  } catch {
    // e.g. a lone UTF-16 surrogate: not representable as canonical JSON, never hashed or run.
    return NOT_UNICODE;
  }
  const key = s.options.idempotencyKey;
  if (key === undefined) return CONTINUE;
  if (!isIdempotencyKey(key)) return BAD_KEY;
  s.idemKey = idempotencyScope(
    {
      agentId: s.ctx.principal.agentId,
      userId: s.session.user_id,
      credential: s.session.credential ?? null,
    },
    s.detail.id,
    key,
  );
  return lookup(s, s.idemKey);
}

async function lookup(s: CallState, key: string): Promise<StepResult> {
  return settle(s, await s.deps.idempotency.lookup(key, s.argsHash));
}

/**
 * A replayed result, a replayed failure or a refusal ends the call; a free key lets it go on. A
 * call that ran and failed is answered with the same failure: it is never run a second time.
 */
export async function settle(s: CallState, claimed: IdempotencyOutcome): Promise<StepResult> {
  if (claimed.kind === 'replay_failure') {
    await s.deps.audit.append(replayedRecord(s, claimed.callId), undefined, {
      declared: declaredKeys(s),
    });
    const f = claimed.failure;
    return deny(claimed.callId, f.code as DenyCode, f.rule, f.message);
  }
  if (claimed.kind === 'replay') {
    await s.deps.audit.append(replayedRecord(s, claimed.callId), s.callArgs, {
      declared: declaredKeys(s),
    });
    return {
      kind: 'allow',
      callId: claimed.callId,
      toolId: s.detail.id,
      version: s.detail.version,
      output: claimed.output,
      warnings: s.warnings,
      ...(s.deprecation ? { deprecation: s.deprecation } : {}),
      // The first answer's trust label: a replay of outside content is labelled as it was.
      ...(claimed.trust !== null ? { trust: claimed.trust as TrustLabel } : {}),
      // An upstream MCP tool's stored result is replayed as the result it was.
      ...(s.def.runtime.kind === 'mcp' ? { outputForm: 'upstream' as const } : {}),
    };
  }
  return claimed.kind === 'conflict'
    ? refuse('IDEMPOTENCY_CONFLICT', claimed.rule, claimed.message)
    : CONTINUE;
}
