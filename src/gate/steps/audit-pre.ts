/**
 * @module The `audit-pre` step: the call's pre record is durable before anything runs; a call whose
 * record cannot be written does not run. Step order: docs/architecture.md §3.
 */
import { declaredKeys, preRecord } from '../audit-records.js';
import { type CallState, CONTINUE, type StepResult } from './step.js';

export async function auditPreStep(s: CallState): Promise<StepResult> {
  await s.deps.audit.append(preRecord(s), s.callArgs, {
    declared: declaredKeys(s),
    hosts: s.hosts,
  });
  return CONTINUE;
}
