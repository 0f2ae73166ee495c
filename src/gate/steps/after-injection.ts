/**
 * @module The run-level rule after injection text (docs/architecture.md §3, step `approval`): once the
 * result scan found instruction-like text in an untrusted result of a session (the session's
 * `injection_seen`), what the model asks for next may be the attacker's choice, not the user's.
 * Calls of the configured action classes, and reads of the configured data-access levels, then
 * wait for a reviewer whatever the tool's own approval mode, who is shown the untrusted sources
 * that entered the session (rule `provenance.injection_seen`). The mark outlives the session: a
 * flagged result is also remembered for its run and its (agent, user) over the untrusted window
 * (provenance.ts), so a fresh session of the same agent for the same user is covered too. A
 * principal no flagged result reached is untouched. Organisation policies may go further and deny (Cedar, `context.injection_seen`):
 * the policy step runs before this one, so a forbid wins.
 */

import { problem, ToolgateError } from '../../core/index.js';
import {
  ACTION_CLASSES,
  type ActionClass,
  DATA_ACCESS,
  type DataAccess,
} from '../../domain/catalog/index.js';
import { untrustedSourcesOf } from '../../domain/sessions/index.js';
import type { SessionRow } from '../../records/store/index.js';

/** What waits for a reviewer once injection text entered a session. */
export interface AfterInjection {
  /** Calls of these action classes. */
  readonly action_classes: readonly ActionClass[];
  /** Reads (`action_class: read`) of tools with these data-access levels. */
  readonly reads: readonly DataAccess[];
}

/**
 * Default: every state-changing call (the classes a provenance escalation covers,
 * `ESCALATING_CLASSES` in provenance.ts; this file imports nothing of the steps, which import it). Sends,
 * irreversible and permission-changing calls wait anyway; the rule adds reversible writes — a
 * forwarding rule or an altered record is state a later step acts on. Reads run.
 */
export const DEFAULT_AFTER_INJECTION: AfterInjection = Object.freeze({
  action_classes: Object.freeze<ActionClass[]>([
    'reversible_write',
    'external_send',
    'irreversible',
    'permission_change',
  ]),
  reads: Object.freeze([]) as readonly DataAccess[],
});

/** The audit rule of a call escalated by this rule. */
export const AFTER_INJECTION_RULE = 'provenance.injection_seen';

/**
 * The option as given, defaults filled in, checked: an unknown class or level is a configuration
 * mistake and refused (never silently dropped, which would loosen the rule).
 */
export function resolveAfterInjection(input: Partial<AfterInjection> = {}): AfterInjection {
  const action_classes = input.action_classes ?? DEFAULT_AFTER_INJECTION.action_classes;
  const reads = input.reads ?? DEFAULT_AFTER_INJECTION.reads;
  const problems = [
    ...listProblems('action_classes', action_classes, ACTION_CLASSES),
    ...listProblems('reads', reads, DATA_ACCESS),
  ];
  if (problems.length > 0) {
    throw new ToolgateError('INPUT_INVALID', 'afterInjection is not valid', { problems });
  }
  return Object.freeze({
    action_classes: Object.freeze([...new Set(action_classes)]),
    reads: Object.freeze([...new Set(reads)]),
  });
}

function listProblems(
  name: string,
  list: unknown,
  allowed: readonly string[],
): ReturnType<typeof problem>[] {
  if (!Array.isArray(list)) return [problem(`/afterInjection/${name}`, 'must be an array', 'type')];
  return list.flatMap((v, i) =>
    typeof v === 'string' && allowed.includes(v)
      ? []
      : [problem(`/afterInjection/${name}/${i}`, `must be one of ${allowed.join(', ')}`, 'enum')],
  );
}

/**
 * The untrusted sources of the session when this call waits under the rule; null when the rule
 * does not apply (no injection text entered the session, or the call is not one it covers).
 */
export function afterInjectionOf(
  rule: AfterInjection,
  session: Pick<SessionRow, 'injection_seen' | 'untrusted_sources'>,
  tool: { readonly action_class: ActionClass; readonly data_access: DataAccess },
  elsewhere: readonly string[] | null = null,
): { readonly untrusted_sources: readonly string[] } | null {
  if (session.injection_seen !== 1 && elsewhere === null) return null;
  const covered =
    rule.action_classes.includes(tool.action_class) ||
    (tool.action_class === 'read' && rule.reads.includes(tool.data_access));
  if (!covered) return null;
  const own = session.injection_seen === 1 ? untrustedSourcesOf(session.untrusted_sources) : [];
  return { untrusted_sources: [...new Set([...own, ...(elsewhere ?? [])])] };
}
