/**
 * @module Step 3, lifecycle: the tool's lifecycle as effective now, whatever the session saw when
 * it opened. A quarantined tool is "not registered" to the caller (the audit says why); a retired
 * or draft one is refused; a deprecated one runs with a warning. Step order: docs/architecture.md §3.
 */
import { effectiveLifecycleOf } from '../../catalog/index.js';
import { NOT_REGISTERED } from './resolve.js';
import { type CallState, CONTINUE, type Refusal, refuse, type StepResult } from './step.js';

const QUARANTINED: Refusal = {
  ...NOT_REGISTERED,
  auditedRule: 'lifecycle.quarantined',
  anonymous: true,
};

export function lifecycleStep(s: CallState): StepResult {
  const detail = s.detail;
  if (detail.quarantined) return QUARANTINED;
  const lifecycle = effectiveLifecycleOf(detail, s.now);
  if (lifecycle === 'retired' || lifecycle === 'draft') {
    return refuse(
      'TOOL_RETIRED',
      `lifecycle.${lifecycle}`,
      `${detail.name} is ${lifecycle} and can no longer be called`,
    );
  }
  s.warnings =
    lifecycle === 'deprecated'
      ? [`${detail.name} ${detail.version} is deprecated and retires ${detail.retire_at ?? 'soon'}`]
      : [];
  return CONTINUE;
}
