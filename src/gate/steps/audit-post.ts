/**
 * @module The `audit-post` step: the egress the call moved is charged (session counter and the
 * agent's egress ceilings), the result record joins the next group commit, and a finished call's
 * bookkeeping is done — the private-read marks for the flow rule, the untrusted source that
 * entered the session and the destination-like literals it brought (provenance.ts), and the
 * idempotency result — before the decision is answered. Step
 * order: docs/architecture.md §3.
 */

import { untrustedSourcesOf } from '../../domain/sessions/index.js';
import type { TrustLabel } from '../../domain/text-trust/index.js';
import { carriesUntrustedText } from '../../domain/text-trust/index.js';
import { postRecord } from '../audit-records.js';
import { deny } from '../decision.js';
import { runningOf } from '../running-calls.js';
import { recordFlaggedText } from './flagged-text.js';
import { releaseClaim } from './idempotency-claim.js';
import { literalsEntering, recordInjection, recordLiterals } from './provenance.js';
import type { ExecuteFailure } from './run-result.js';
import type { CallState, StepResult } from './step.js';

export function auditPostStep(s: CallState): StepResult | Promise<StepResult> {
  const spent = s.result.egressSpent;
  return spent !== undefined && spent > 0 ? chargeEgress(s, spent) : post(s);
}

async function chargeEgress(s: CallState, bytes: number): Promise<StepResult> {
  const { sessions, identities, counters } = s.deps;
  await sessions.addEgressBytes(s.session.id, bytes);
  identities.addToSession(s.session.id, 'egress_bytes', bytes);
  await counters.chargeEgress(s.who, s.ceilings, bytes);
  return post(s);
}

function post(s: CallState): StepResult | Promise<StepResult> {
  // Only the pre record must be durable before a tool runs (docs/architecture.md §1); the result
  // record joins the next group commit without holding the caller. A crash in between leaves a
  // pre record without a result, which is what it then was: outcome unknown.
  // A call the stopping gateway cut has its post record already (running-calls.ts).
  if (!runningOf(s.deps).wasCut(s)) {
    s.deps.audit
      .append(postRecord(s), undefined, { deferred: true, hosts: s.hosts })
      .catch(s.deps.lostPostRecord);
  }
  const result = s.result;
  if (!result.ok) return s.idemKey !== null ? failedUnderKey(s, result) : denied(result, s);
  const literals = literalsEntering(result.trust, result.output);
  return s.def.data_access === 'private' ||
    s.idemKey !== null ||
    literals.length > 0 ||
    result.trust?.injection === true ||
    entersUntrusted(s, result.trust)
    ? afterCall(s, result.output, literals)
    : allowed(s, result.output);
}

/** True when this result is untrusted text (carriesUntrustedText) the session has not yet recorded (as this gate sees it). */
function entersUntrusted(s: CallState, trust: TrustLabel | undefined): boolean {
  if (trust === undefined || !carriesUntrustedText(trust)) return false;
  const known = untrustedSourcesOf(s.session.untrusted_sources).includes(s.detail.id);
  return !known || (trust.injection && s.session.injection_seen !== 1);
}

async function afterCall(
  s: CallState,
  output: unknown,
  literals: readonly { readonly kind: string; readonly hash: string }[],
): Promise<StepResult> {
  const { sessions, identities, counters, idempotency } = s.deps;
  if (s.def.data_access === 'private') {
    await counters.recordPrivateRead(s.who, s.agent.ceilings);
    // The flag only ever goes from 0 to 1: once this gate saw it set, there is nothing to write.
    if (s.session.private_data_read !== 1) {
      await sessions.markPrivateDataRead(s.session.id);
      identities.markPrivateRead(s.session.id);
    }
  }
  const trust = s.result.ok ? s.result.trust : undefined;
  if (trust && entersUntrusted(s, trust)) {
    const stored = await sessions.addUntrustedSource(s.session.id, s.detail.id, trust.injection);
    identities.noteUntrustedSources(s.session.id, stored.sources, stored.injectionSeen);
  }
  // After the source: a session with literals recorded always has untrusted_sources set, which is
  // what tells a later call's look-up whether to query at all (provenance.ts).
  if (literals.length > 0) await recordLiterals(s, literals);
  // Instruction-like text is remembered beyond this session: for the run and the (agent, user)
  // over the untrusted window, so a new session does not start clean (after-injection.ts).
  if (trust?.injection === true) {
    await recordInjection(s);
    await recordFlaggedText(s, output);
  }
  if (s.idemKey !== null) {
    await idempotency.storeResult(s.idemKey, output, trust);
    s.claimHeld = false;
  }
  return allowed(s, output);
}

function denied(result: ExecuteFailure, s: CallState): StepResult {
  return deny(s.callId, result.code, result.rule, result.message);
}

/**
 * A call under an idempotency key that failed: when its tool ran, the failure is stored, so a
 * retry is answered with it and never runs the tool again; when it never started, the key is given
 * back (nothing ran under it).
 */
async function failedUnderKey(s: CallState, result: ExecuteFailure): Promise<StepResult> {
  if (result.notRun === true) await releaseClaim(s);
  else if (s.idemKey !== null) {
    await s.deps.idempotency.storeFailure(s.idemKey, result);
    s.claimHeld = false;
  }
  return denied(result, s);
}

function allowed(s: CallState, output: unknown): StepResult {
  const trust = s.result.ok ? s.result.trust : undefined;
  return {
    kind: 'allow',
    callId: s.callId,
    toolId: s.detail.id,
    version: s.detail.version,
    output,
    warnings: s.warnings,
    ...(s.deprecation ? { deprecation: s.deprecation } : {}),
    ...(trust ? { trust } : {}),
    ...(s.def.runtime.kind === 'mcp' ? { outputForm: 'upstream' as const } : {}),
  };
}
