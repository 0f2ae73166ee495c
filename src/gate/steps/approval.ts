/**
 * @module Step 9, approval: a call whose tool (or whose arguments, by its conditions) needs
 * approval waits for a reviewer, who sees the resolved call; its retry with the same arguments
 * consumes the approval and goes on. Limits come after this step, so a waiting call spends no
 * slot. Step order: docs/architecture.md §3.
 */
import { approvalRequired, type RenderedCall } from '../../approvals/index.js';
import { pendingRecord } from '../audit-records.js';
import { type CallState, CONTINUE, type Refusal, type StepResult } from './step.js';

const AGENT_PENDING_CAP: Refusal = {
  kind: 'refuse',
  code: 'RATE_LIMITED',
  rule: 'approval.agent_pending_cap',
  message: 'this agent has too many calls waiting for approval',
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
  // A value first seen in untrusted content escalates the call whatever the mode (provenance.ts).
  const untrusted = s.untrustedDestinations;
  if (!need.required && untrusted.length === 0) return CONTINUE;
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
  };
  return resolveApproval(s, rendered);
}

async function resolveApproval(s: CallState, rendered: RenderedCall): Promise<StepResult> {
  const def = s.def;
  const resolved = await s.deps.approvals.resolve({
    sessionId: s.session.id,
    agentId: s.ctx.agentId,
    userId: s.session.user_id,
    toolId: s.detail.id,
    toolVersion: s.detail.version,
    actionClass: def.action_class,
    argsHash: s.argsHash,
    rendered,
  });
  if (resolved.kind === 'too_many') {
    return resolved.scope === 'agent' ? AGENT_PENDING_CAP : SESSION_PENDING_CAP;
  }
  if (resolved.kind === 'pending') {
    await s.deps.audit.append(pendingRecord(s, resolved.approvalId));
    return {
      kind: 'pending_approval',
      callId: s.callId,
      approvalId: resolved.approvalId,
      rendered,
      message: def.approval.out_of_band
        ? 'this call needs an administrator approval out of band; retry the same call once approved'
        : rendered.untrusted_destinations
          ? 'this call carries a destination first seen in untrusted content and needs approval; retry the same call with the same arguments once approved'
          : 'this call needs approval; retry the same call with the same arguments once approved',
    };
  }
  s.approval = resolved;
  return CONTINUE;
}
