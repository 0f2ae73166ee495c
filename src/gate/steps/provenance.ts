/**
 * @module Where a call's values came from (docs/architecture.md §3). An untrusted result's
 * destination-like literals (content/destination-literals.ts) are recorded for its run by
 * audit-post (step 15); a later call of the run that sends, pays or changes state is looked up by
 * the policy step (6) — so that Cedar policies can read the kinds as
 * `context.untrusted_destinations` and forbid — and, when one of its arguments carries a value
 * first seen in untrusted content, the approval step (9) escalates it to a reviewer, who is shown
 * where each value first appeared. Cheap by construction: no query for a read, none for a session
 * of its own run that no untrusted result entered, otherwise one query on the (run, hash) key.
 */
import type { UntrustedDestination } from '../../approvals/index.js';
import type { ActionClass } from '../../catalog/index.js';
import {
  argumentLiteralsOf,
  carriesUntrustedText,
  type DestinationLiteral,
  destinationLiteralsOf,
  type TrustLabel,
} from '../../content/index.js';
import type { CallState } from './step.js';

/**
 * Classes whose arguments can carry a destination an attacker chose. `reversible_write` is one of
 * them: a forwarding rule, a draft addressed to someone or a saved payee is state a later step
 * acts on. Reads are not: what they may reach is the URL policy's and the flow rule's concern.
 */
export const ESCALATING_CLASSES: ReadonlySet<ActionClass> = new Set<ActionClass>([
  'reversible_write',
  'external_send',
  'irreversible',
  'permission_change',
]);

/** The audit rule of an escalated call. */
export const PROVENANCE_RULE = 'provenance.untrusted_destination';

/**
 * Looks up which of the call's argument values the run first saw in an untrusted result and sets
 * `s.untrustedDestinations`; undefined (and no query) when there is nothing to look up.
 */
export function lookUpUntrustedDestinations(s: CallState): Promise<void> | undefined {
  if (!ESCALATING_CLASSES.has(s.def.action_class)) return undefined;
  // A session of its own run that no untrusted result entered has nothing recorded; one that
  // joined a named run may share it with a session that read something untrusted.
  const session = s.session;
  if (session.untrusted_sources === null && session.run_id === session.id) return undefined;
  const candidates = argumentLiteralsOf(s.callArgs);
  if (candidates.length === 0) return undefined;
  return s.deps.sessions
    .destinationSightings(
      s.session.run_id,
      candidates.map((c) => c.hash),
    )
    .then((sightings) => {
      if (sightings.length === 0) return;
      const at = new Map(candidates.map((c) => [c.hash, c.pointer]));
      s.untrustedDestinations = sightings.map((r) => ({
        kind: r.kind,
        argument: at.get(r.hash) ?? '',
        tool_id: r.tool_id,
        call_id: r.call_id,
        first_seen_at: r.first_seen_at,
      }));
    });
}

/** The kinds of the call's untrusted destinations, for Cedar (`context.untrusted_destinations`). */
export function untrustedDestinationKinds(s: CallState): string[] {
  const list = s.untrustedDestinations;
  if (list.length === 0) return [];
  return [...new Set(list.map((d) => d.kind))];
}

/**
 * The literals an untrusted result brings into the run: none for a trusted one, unless
 * instruction-like text was found in it (then it is untrusted text, `carriesUntrustedText`).
 */
export function literalsEntering(
  trust: TrustLabel | undefined,
  output: unknown,
): readonly DestinationLiteral[] {
  return trust !== undefined && carriesUntrustedText(trust) ? destinationLiteralsOf(output) : [];
}

/** Records them for the run (insert-or-ignore: the first sighting stays). */
export function recordLiterals(
  s: CallState,
  literals: readonly DestinationLiteral[],
): Promise<void> {
  return s.deps.sessions.recordDestinationLiterals(
    { runId: s.session.run_id, toolId: s.detail.id, callId: s.callId, at: s.now },
    literals,
  );
}

/** What audit records say of an escalated call: kinds, arguments and first sightings. */
export function provenanceDetails(s: CallState): {
  readonly rule: string;
  readonly untrusted_destinations: readonly UntrustedDestination[];
} | null {
  return s.untrustedDestinations.length === 0
    ? null
    : { rule: PROVENANCE_RULE, untrusted_destinations: s.untrustedDestinations };
}
