/**
 * @module The `approval` step: a call whose tool (or whose arguments, by its conditions) needs
 * approval waits for a reviewer, who sees the resolved call; its retry with the same arguments
 * consumes the approval and goes on. A call the limits would refuse is refused before anyone is
 * asked; the limits charge after this step, so a waiting call spends no slot. Step order:
 * docs/architecture.md §3.
 */
import type { FlaggedText } from '../../core/index.js';
import {
  type ApprovalCall,
  type ApprovalRequirement,
  approvalRequired,
  type RenderedCall,
  type ScopeCall,
} from '../../domain/decisions/index.js';
import { declaredKeys, pendingRecord } from '../audit-records.js';
import type { BoundApproval } from '../call-context.js';
import { afterInjectionOf } from './after-injection.js';
import { approvalReasons, callCost } from './approval-reasons.js';
import { flaggedTextsOf } from './flagged-text.js';
import { limitsWouldRefuse } from './limits.js';
import { scopeCallOf, scopeDestinations } from './scope-destinations.js';
import { type CallState, CONTINUE, type Refusal, refuse, type StepResult } from './step.js';

const AGENT_PENDING_CAP: Refusal = {
  kind: 'refuse',
  code: 'RATE_LIMITED',
  rule: 'approval.agent_pending_cap',
  message: 'this agent has too many calls waiting for approval',
};

const PRINCIPAL_PENDING_CAP: Refusal = {
  kind: 'refuse',
  code: 'RATE_LIMITED',
  rule: 'approval.principal_pending_cap',
  message:
    "this caller has its share of the agent's calls waiting for approval (a user's, or the agent's own keys')",
};

const SESSION_PENDING_CAP: Refusal = {
  kind: 'refuse',
  code: 'RATE_LIMITED',
  rule: 'approval.pending_cap',
  message: 'this session has too many calls waiting for approval',
};

export function approvalStep(s: CallState): StepResult | Promise<StepResult> {
  const def = s.def;
  const need = approvalRequired(def.approval.mode, def.approval.conditions, s.callArgs);
  // A retry naming its approval is checked even where none is needed now: a used or foreign
  // state runs nothing, whatever the tool's approval rule has become. A value first seen in
  // untrusted content escalates the call whatever the mode (provenance.ts).
  const untrusted = s.untrustedDestinations;
  // Injection text entered the session: what it covers waits whatever the mode (after-injection.ts).
  const afterInjection = afterInjectionOf(
    s.deps.afterInjection,
    s.session,
    def,
    s.injectionElsewhere,
  );
  s.afterInjection = afterInjection;
  if (s.options.previewFor !== undefined) {
    return previewRefusal(s, need.required || untrusted.length > 0 || afterInjection !== null);
  }
  if (
    !need.required &&
    untrusted.length === 0 &&
    afterInjection === null &&
    s.options.boundApproval === undefined
  ) {
    return CONTINUE;
  }
  // Where the flagged text came from and what it said: read only for a call it escalates.
  if (afterInjection !== null) {
    return flaggedTextsOf(s).then((flagged) => decide(s, need, afterInjection, flagged));
  }
  return decide(s, need, null, []);
}

function decide(
  s: CallState,
  need: ApprovalRequirement,
  afterInjection: { readonly untrusted_sources: readonly string[] } | null,
  flagged: readonly FlaggedText[],
): Promise<StepResult> {
  const def = s.def;
  const untrusted = s.untrustedDestinations;
  const destinations = scopeDestinations(s);
  const rendered: RenderedCall = {
    tool: s.detail.id,
    version: s.detail.version,
    action_class: def.action_class,
    arguments: s.callArgs,
    destination_hosts: s.destinations.size > 0 ? [...s.destinations] : s.hosts,
    conditions: need.matched,
    second_factor: def.approval.second_factor,
    out_of_band: def.approval.out_of_band,
    ...(untrusted.length > 0 ? { untrusted_destinations: untrusted } : {}),
    ...(afterInjection ? { after_injection: afterInjection } : {}),
    reasons: approvalReasons(s, need, afterInjection, flagged),
    destination_values: destinations,
    cost: callCost(s),
  };
  const bound = s.options.boundApproval;
  // A scoped approval may cover a call that waits for its tool's own rule alone.
  const scope = scopeCallOf(s, destinations, untrusted.length > 0 || afterInjection !== null);
  return askAfterLimits(s, () =>
    bound ? resolveBound(s, bound, rendered) : resolveApproval(s, rendered, scope),
  );
}

/**
 * Check before asking: a call the limits would refuse now is refused before anyone is asked (and
 * an approved one keeps its approval); `ask` runs only when they would let it through.
 */
async function askAfterLimits(s: CallState, ask: () => Promise<StepResult>): Promise<StepResult> {
  const refused = await limitsWouldRefuse(s);
  return refused ?? ask();
}

function approvalCall(s: CallState, rendered: RenderedCall): ApprovalCall {
  return {
    sessionId: s.session.id,
    agentId: s.ctx.principal.agentId,
    userId: s.session.user_id,
    // With agent and user, the principal an approval belongs to, in any of its runs.
    credential: s.session.credential,
    // A token user is the session's user with the token's permissions; else the agent's keys.
    tokenUser: s.session.user_permissions !== null ? s.session.user_id : null,
    toolId: s.detail.id,
    toolVersion: s.detail.version,
    actionClass: s.def.action_class,
    argsHash: s.argsHash,
    rendered,
  };
}

/**
 * The approval a retry names must be of this very call (same tool, version and hash; the desk
 * checks it is the principal's). A sealed state's refusals are REQUEST_STATE_*; a held call's
 * (`via: 'wait'`) are APPROVAL_INVALID with the rule saying why, and a held call whose tool moved
 * to another version while it waited is decided afresh (its approval covers the old version only).
 */
async function resolveBound(
  s: CallState,
  bound: BoundApproval,
  rendered: RenderedCall,
): Promise<StepResult> {
  const held = bound.via === 'wait';
  if (
    bound.toolId !== s.detail.id ||
    bound.toolVersion !== s.detail.version ||
    bound.argsHash !== s.argsHash
  ) {
    if (held) return resolveApproval(s, rendered);
    return stateRefusal('REQUEST_STATE_MISMATCH', 'request_state.call_changed', s, 'call_changed');
  }
  const resolved = await s.deps.approvals.resolveBound(bound.approvalId, approvalCall(s, rendered));
  switch (resolved.kind) {
    case 'approved':
      s.approval = resolved;
      return CONTINUE;
    case 'pending':
      return pending(s, resolved.approvalId, rendered);
    case 'rejected':
      return rejection(bound.approvalId, resolved.reason);
    case 'refused':
      if (held) return heldRefusal(bound.approvalId, resolved.why);
      return resolved.why === 'mismatch'
        ? stateRefusal('REQUEST_STATE_MISMATCH', 'request_state.call_changed', s, 'call_changed')
        : resolved.why === 'expired'
          ? stateRefusal('REQUEST_STATE_EXPIRED', 'request_state.approval_expired', s, 'expired')
          : stateRefusal('REQUEST_STATE_REPLAYED', 'request_state.replayed', s, 'replayed');
  }
}

/** An approver said no to exactly this call (its request still alive): nothing runs. */
function rejection(approvalId: string, reason: string | null): Refusal {
  return refuse(
    'APPROVAL_INVALID',
    'approval.rejected',
    `an approver rejected this call (approval ${approvalId})${reason ? `: ${reason}` : ''}`,
  );
}

/** Why the approval a held call waited for cannot run it: nothing runs. */
function heldRefusal(
  approvalId: string,
  why: 'mismatch' | 'used' | 'withdrawn' | 'expired',
): Refusal {
  switch (why) {
    case 'expired':
      return refuse(
        'APPROVAL_INVALID',
        'approval.expired',
        `approval ${approvalId} expired before this call could use it; nothing ran`,
      );
    case 'withdrawn':
      return refuse(
        'APPROVAL_INVALID',
        'approval.withdrawn',
        `approval ${approvalId} was withdrawn (its run was revoked); nothing ran`,
      );
    case 'used':
      return refuse(
        'APPROVAL_INVALID',
        'approval.used',
        `approval ${approvalId} was already used by another call of the same arguments; this one ran nothing`,
      );
    case 'mismatch':
      return refuse(
        'APPROVAL_INVALID',
        'approval.mismatch',
        `approval ${approvalId} is not this caller's approval of this call; nothing ran`,
      );
  }
}

function stateRefusal(
  code: 'REQUEST_STATE_MISMATCH' | 'REQUEST_STATE_EXPIRED' | 'REQUEST_STATE_REPLAYED',
  rule: string,
  s: CallState,
  reason: string,
): Refusal {
  const message =
    code === 'REQUEST_STATE_MISMATCH'
      ? 'this requestState was sealed for another call; nothing ran'
      : code === 'REQUEST_STATE_EXPIRED'
        ? 'the approval this requestState names has expired; nothing ran'
        : 'the approval this requestState names was already used; nothing ran';
  return refuse(code, rule, message, { reason, rule, call_id: s.callId });
}

async function pending(
  s: CallState,
  approvalId: string,
  rendered: RenderedCall,
): Promise<StepResult> {
  await s.deps.audit.append(pendingRecord(s, approvalId), s.callArgs, {
    declared: declaredKeys(s),
  });
  return {
    kind: 'pending_approval',
    callId: s.callId,
    approvalId,
    rendered,
    argsHash: s.argsHash,
    message: s.def.approval.out_of_band
      ? 'this call needs an administrator approval out of band; retry the same call once approved'
      : rendered.untrusted_destinations
        ? 'this call carries a destination first seen in untrusted content and needs approval; retry the same call with the same arguments once approved'
        : rendered.after_injection
          ? 'instruction-like text entered this session through an untrusted result, so this call needs approval; retry the same call with the same arguments once approved'
          : 'this call needs approval; retry the same call with the same arguments once approved',
  };
}

async function resolveApproval(
  s: CallState,
  rendered: RenderedCall,
  scope: ScopeCall | null = null,
): Promise<StepResult> {
  const resolved = await s.deps.approvals.resolve(approvalCall(s, rendered), scope);
  if (resolved.kind === 'too_many') {
    switch (resolved.scope) {
      case 'agent':
        return AGENT_PENDING_CAP;
      case 'principal':
        return PRINCIPAL_PENDING_CAP;
      case 'session':
        return SESSION_PENDING_CAP;
    }
  }
  if (resolved.kind === 'pending') {
    // A new request of a tool that declares a preview: the reviewer gets the state it would
    // change, fetched in the background (preview-runner.ts); the caller is answered at once.
    const declaration = s.def.preview;
    if (resolved.created && declaration !== undefined) {
      s.deps.previews?.start({
        ctx: s.ctx,
        approvalId: resolved.approvalId,
        declaration,
        callArgs: s.callArgs,
      });
    }
    return pending(s, resolved.approvalId, rendered);
  }
  if (resolved.kind === 'rejected') return rejection(resolved.approvalId, resolved.reason);
  s.approval = resolved;
  return CONTINUE;
}

/**
 * A call the gate runs as a reviewer's preview (preview-runner.ts) must be a read that needs no
 * approval: anything else is refused here, before it could run, and audited as any refusal.
 */
function previewRefusal(s: CallState, wouldWait: boolean): StepResult {
  if (s.def.action_class !== 'read') {
    return refuse(
      'POLICY_DENIED',
      'preview.not_read_only',
      `a preview runs only a read tool; ${s.detail.id} is ${s.def.action_class}`,
    );
  }
  if (wouldWait) {
    return refuse(
      'POLICY_DENIED',
      'preview.needs_approval',
      `a preview never waits for a person; a call of ${s.detail.id} would need approval here`,
    );
  }
  return CONTINUE;
}
