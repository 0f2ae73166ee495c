/**
 * @module Every reason the `approval` step makes a call wait, as one structured list the approval
 * keeps (core/approval-reasons.ts), and what the call costs against its session's budgets. The
 * list is the step's own findings — never a guess a view makes from the action class — so an
 * escalated call reads as escalated on every page (docs/architecture.md §3, step `approval`).
 */
import type { ApprovalReason, CallCost, FlaggedText } from '../../core/index.js';
import { APPROVAL_FLOOR } from '../../domain/catalog/index.js';
import type { ApprovalRequirement } from '../../domain/decisions/index.js';
import { AFTER_INJECTION_RULE } from './after-injection.js';
import type { CallState } from './step.js';

/** The rule a provenance escalation is audited under (provenance.ts). */
const UNTRUSTED_DESTINATION_RULE = 'provenance.untrusted_destination';

/** Why this call waits: the tool's own rule first, then each escalation. */
export function approvalReasons(
  s: CallState,
  need: ApprovalRequirement,
  afterInjection: { readonly untrusted_sources: readonly string[] } | null,
  flagged: readonly FlaggedText[],
): ApprovalReason[] {
  const def = s.def;
  const out: ApprovalReason[] = [];
  if (need.required && need.matched.length === 0) {
    const floor = APPROVAL_FLOOR[def.action_class].mode === 'always';
    out.push(
      floor && def.approval.mode === 'always'
        ? {
            kind: 'action_class',
            rule: `approval.${def.action_class}`,
            action_class: def.action_class,
          }
        : { kind: 'definition', rule: 'approval.definition', mode: def.approval.mode },
    );
  }
  for (const c of need.matched) {
    out.push({
      kind: 'condition',
      rule: 'approval.condition',
      argument: c.argument,
      op: c.op,
      value: c.value,
    });
  }
  if (afterInjection) {
    out.push({
      kind: 'after_injection',
      rule: AFTER_INJECTION_RULE,
      untrusted_sources: afterInjection.untrusted_sources,
      flagged,
    });
  }
  if (s.untrustedDestinations.length > 0) {
    out.push({
      kind: 'untrusted_destination',
      rule: UNTRUSTED_DESTINATION_RULE,
      destinations: s.untrustedDestinations,
    });
  }
  return out;
}

/**
 * The call's cost and its session's budgets left, as the gate saw them when it asked (the
 * `limits` step charges after the approval, so this is what would be spent, not what was).
 */
export function callCost(s: CallState): CallCost {
  const budgets = s.agent.budgets;
  const spend = budgets.spend_cents ?? null;
  const sends = s.def.action_class === 'external_send' ? (budgets.external_sends ?? null) : null;
  return {
    cents: s.cents,
    spend_budget_cents: spend,
    spend_left_cents: spend === null ? null : spend - s.session.spend_cents,
    external_sends_budget: sends,
    external_sends_left: sends === null ? null : sends - s.session.external_sends,
  };
}
