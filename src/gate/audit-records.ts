/**
 * @module The audit records of one call, built from its state: denied (a step refused), pending
 * approval, replayed, pre (durable before anything runs) and post (the result). Records are built
 * field by field: spreading optional parts costs more than the rest of the record on this path.
 */

import type { Mutable } from '../core/index.js';
import { argumentsHash } from '../domain/decisions/index.js';
import { untrustedSourcesOf } from '../domain/sessions/index.js';
import { declaredPropertyNames } from '../records/audit/index.js';
import type { AuditRecord } from './audit-writer.js';
import { attemptedName, redactArguments } from './redaction.js';
import { AFTER_INJECTION_RULE } from './steps/after-injection.js';
import { provenanceDetails } from './steps/provenance.js';
import type { CallState, Refusal } from './steps/step.js';

/** The argument hash of anything, or null when it cannot be represented (never throws). */
export function safeHash(value: unknown): string | null {
  try {
    return argumentsHash(value);
  } catch {
    return null;
  }
}

/**
 * The keys a record of this call may keep readable: the property names of the resolved tool's
 * input schema; null (every key hashed) before a tool is resolved or when the refusal must not
 * name it.
 */
export function declaredKeys(s: CallState, anonymous = false): ReadonlySet<string> | null {
  return anonymous || s.ref === null || s.def === undefined
    ? null
    : declaredPropertyNames(s.def.input_schema);
}

/** A step's refusal, as auditors see it. */
export function deniedRecord(s: CallState, r: Refusal): AuditRecord {
  const tool = r.anonymous ? null : s.ref;
  return {
    ...s.base,
    kind: 'call.denied',
    toolId: tool?.id ?? null,
    toolVersion: tool?.version ?? null,
    argsHash: safeHash(s.args),
    argsRedacted: redactArguments(s.args),
    decision: 'deny',
    code: r.code,
    rule: r.auditedRule ?? r.rule,
    message: r.message,
    durationMs: performance.now() - s.started,
    // The attempted name is recorded for unregistered probes (C16), bounded; a name shaped
    // like a credential (a key pasted as the tool) is masked: the log can never drop it.
    details: tool ? deniedDetails(s) : { attempted: attemptedName(s.toolRef) },
  };
}

/** A denial of a call that carried untrusted destinations (a policy forbade it) says which. */
function deniedDetails(s: CallState): Record<string, unknown> {
  const p = provenanceDetails(s);
  return p === null ? {} : { provenance: p };
}

/** A replay runs nothing, but it is a call the principal made and was answered: audited. */
export function replayedRecord(s: CallState, replayedCallId: string): AuditRecord {
  return {
    ...s.base,
    kind: 'call.replayed',
    toolId: s.detail.id,
    toolVersion: s.detail.version,
    argsHash: s.argsHash,
    argsRedacted: redactArguments(s.callArgs),
    decision: 'allow',
    rule: 'idempotency.replay',
    details: { replayed_call_id: replayedCallId },
  };
}

export function pendingRecord(s: CallState, approvalId: string): AuditRecord {
  const provenance = provenanceDetails(s);
  return {
    ...s.base,
    kind: 'call.pending_approval',
    toolId: s.detail.id,
    toolVersion: s.detail.version,
    argsHash: s.argsHash,
    argsRedacted: redactArguments(s.callArgs),
    decision: 'pending_approval',
    approvalId,
    // An escalation names its own rule: the tool alone would not have waited, or not only.
    rule:
      provenance?.rule ??
      (s.afterInjection ? AFTER_INJECTION_RULE : `approval.${s.def.action_class}`),
    ...(provenance || s.afterInjection
      ? {
          details: {
            ...(provenance ? { provenance } : {}),
            ...(s.afterInjection ? { after_injection: s.afterInjection } : {}),
          },
        }
      : {}),
  };
}

export function preRecord(s: CallState): AuditRecord {
  const pre: Mutable<AuditRecord> = {
    at: s.now,
    callId: s.callId,
    sessionId: s.session.id,
    runId: s.session.run_id,
    agentId: s.ctx.principal.agentId,
    userId: s.session.user_id,
    traceId: s.traceId,
    kind: 'call.pre',
    toolId: s.detail.id,
    toolVersion: s.detail.version,
    argsHash: s.argsHash,
    argsRedacted: redactArguments(s.callArgs),
    decision: 'allow',
    details: s.warnings.length > 0 ? { warnings: s.warnings } : {},
  };
  // Versions side by side (C2): which version a deprecated call ran, and whether it was pinned.
  if (s.deprecation) pre.details = { ...pre.details, deprecation: s.deprecation };
  if (s.pinnedMajor !== null) pre.details = { ...pre.details, version_pin: s.pinnedMajor };
  const provenance = provenanceDetails(s);
  if (provenance) pre.details = { ...pre.details, provenance };
  if (s.afterInjection) pre.details = { ...pre.details, after_injection: s.afterInjection };
  if (s.base.model !== undefined) pre.model = s.base.model;
  if (s.approval) {
    pre.approvalId = s.approval.approvalId;
    pre.approver = s.approval.approver;
    // A call a scoped approval covered names the scope and which use of it this is.
    const scope = s.approval.scope;
    if (scope)
      pre.details = {
        ...pre.details,
        approval_scope: { approval: scope.approvalId, use: scope.use, of: scope.calls },
      };
  }
  if (s.destinations.size > 0) pre.egressHost = [...s.destinations].join(',');
  return pre;
}

export function postRecord(s: CallState): AuditRecord {
  const result = s.result;
  const details: Record<string, unknown> = {
    result_hash: result.ok ? safeHash(result.output) : null,
    result_bytes: result.bytes,
  };
  if (result.sandbox) details.sandbox = result.sandbox;
  if (result.egress) {
    details.egress = { bytes_in: result.egress.bytesIn, denials: result.egress.denials };
  }
  if (result.redacted) {
    details.redacted = true;
    details.flagged = 'credential_echoed';
  }
  if (result.trust) {
    const t = result.trust;
    details.trust = {
      source: t.source,
      injection: t.injection,
      findings: t.findings.map((f) => ({
        kind: f.kind,
        rule: f.rule,
        at: f.pointer,
        action: f.action,
      })),
      ...(t.truncated ? { truncated: true } : {}),
    };
  }
  // The untrusted sources that had entered the session before this call ran; this call's own
  // result is described by `trust`.
  const sources = untrustedSourcesOf(s.session.untrusted_sources);
  if (sources.length > 0) details.untrusted_sources = sources;
  const post: Mutable<AuditRecord> = {
    at: s.deps.clock(),
    callId: s.callId,
    sessionId: s.session.id,
    runId: s.session.run_id,
    agentId: s.ctx.principal.agentId,
    userId: s.session.user_id,
    traceId: s.traceId,
    kind: 'call.post',
    toolId: s.detail.id,
    toolVersion: s.detail.version,
    argsHash: s.argsHash,
    argsRedacted: undefined,
    decision: result.ok ? 'allow' : 'deny',
    outcome: result.outcome ?? (result.ok ? 'ok' : result.rule),
    bytesOut: result.egress?.bytesOut ?? 0,
    durationMs: performance.now() - s.started,
    details,
  };
  if (s.base.model !== undefined) post.model = s.base.model;
  if (result.egress?.egressHost) post.egressHost = result.egress.egressHost;
  if (!result.ok) {
    post.code = result.code;
    post.rule = result.rule;
    post.message = result.message;
  }
  return post;
}

/**
 * The post record of a call still running when the gateway stopped (running-calls.ts): its
 * outcome is unknown — the tool may have finished its work — and nobody was answered.
 */
export function interruptedRecord(s: CallState): AuditRecord {
  const post: Mutable<AuditRecord> = {
    at: s.deps.clock(),
    callId: s.callId,
    sessionId: s.session.id,
    runId: s.session.run_id,
    agentId: s.ctx.principal.agentId,
    userId: s.session.user_id,
    traceId: s.traceId,
    kind: 'call.post',
    toolId: s.detail.id,
    toolVersion: s.detail.version,
    argsHash: s.argsHash,
    argsRedacted: undefined,
    decision: 'deny',
    outcome: 'interrupted',
    code: 'SHUTTING_DOWN',
    rule: 'gateway.shutdown',
    message: 'the gateway stopped before the call finished; whether the tool completed is unknown',
    bytesOut: 0,
    durationMs: performance.now() - s.started,
    details: { result_hash: null, result_bytes: 0 },
  };
  if (s.base.model !== undefined) post.model = s.base.model;
  return post;
}
