/**
 * @module The `lifecycle` step: the tool's lifecycle as effective now, whatever the session saw when
 * it opened. A quarantined tool is "not registered" to the caller (the audit says why); a retired
 * or draft one is refused, a retired one naming its successor; a deprecated one runs with a
 * warning and a deprecation notice (C2). Step order: docs/architecture.md §3.
 */
import { effectiveLifecycleOf } from '../../domain/catalog/index.js';
import { NOT_REGISTERED } from './resolve.js';
import { type CallState, CONTINUE, type Refusal, refuse, type StepResult } from './step.js';
import { heldSuccessor, successorOf } from './version-pin.js';

const QUARANTINED: Refusal = {
  ...NOT_REGISTERED,
  auditedRule: 'lifecycle.quarantined',
  anonymous: true,
};

const NO_WARNINGS: string[] = [];

export function lifecycleStep(s: CallState): StepResult | Promise<StepResult> {
  const detail = s.detail;
  if (detail.quarantined) return QUARANTINED;
  const lifecycle = effectiveLifecycleOf(detail, s.now);
  if (lifecycle === 'retired') return retired(s);
  if (lifecycle === 'draft') {
    return refuse(
      'TOOL_RETIRED',
      'lifecycle.draft',
      `${detail.name} is draft and can no longer be called`,
      { successor: null },
    );
  }
  if (lifecycle !== 'deprecated') {
    s.warnings = NO_WARNINGS;
    return CONTINUE;
  }
  const successor = heldSuccessor(s, s.entry);
  s.warnings = [
    `${detail.name} ${detail.version} is deprecated and retires ${detail.retire_at ?? 'soon'}` +
      (successor ? `; move to ${successor.tool} (${successor.version})` : ''),
  ];
  s.deprecation = {
    version: detail.version,
    deprecated_at: detail.deprecated_at,
    retire_at: detail.retire_at,
    successor: successor?.version ?? null,
  };
  return CONTINUE;
}

/** Refused as retired, naming what this caller may call instead (read now: a rare path). */
async function retired(s: CallState): Promise<StepResult> {
  const detail = s.detail;
  return refuse(
    'TOOL_RETIRED',
    'lifecycle.retired',
    `${detail.name} ${detail.version} is retired and can no longer be called`,
    { successor: await successorOf(s, detail, s.entry) },
  );
}
