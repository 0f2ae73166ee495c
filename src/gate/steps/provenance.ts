/**
 * @module Where a call's values came from (docs/architecture.md §3). An untrusted result's
 * destination-like literals (content/destination-literals.ts) are recorded by audit-post (step `audit-post`)
 * for its run and for its (agent, user) over the untrusted window (sessions/run-literals.ts), so
 * that neither a new session nor a new run id forgets them; a later call that sends, pays or
 * changes state is looked up by the policy step (6) — so that Cedar policies can read the kinds as
 * `context.untrusted_destinations` and forbid — and, when one of its arguments carries a value
 * first seen in untrusted content, the approval step (9) escalates it to a reviewer, who is shown
 * where each value first appeared. The same look-up finds instruction-like text that reached the
 * run or the principal from another session (after-injection.ts).
 *
 * No bound drops silently: a result with more literals than are recorded leaves an `unrecorded`
 * mark that escalates every later such call within the window, and a call whose arguments hold
 * more literals than are looked up (its destination arguments read first) is escalated whenever
 * anything untrusted is on record for it.
 */

import type { ActionClass } from '../../domain/catalog/index.js';
import type { UntrustedDestination } from '../../domain/decisions/index.js';
import { untrustedSince } from '../../domain/limits/index.js';
import { destinationValues, valuesAt } from '../../domain/policy/index.js';
import {
  type LiteralScopes,
  type LiteralSighting,
  principalScope,
  UNRECORDED_HASH,
  UNRECORDED_KIND,
} from '../../domain/sessions/index.js';
import {
  carriesUntrustedText,
  type LiteralScan,
  scanArgumentLiterals,
  scanResultLiterals,
  type TrustLabel,
} from '../../domain/text-trust/index.js';
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

/** Kind shown for a call whose arguments held more literals than were looked up. */
export const UNCHECKED_KIND = 'unchecked';

/** Where this call's records are kept and looked up: its run and its (agent, user) window. */
export function literalScopes(s: CallState): LiteralScopes {
  return {
    runId: s.session.run_id,
    principal: principalScope(s.ctx.principal.agentId, s.session.user_id),
    since: untrustedSince(s.agent.ceilings, s.now),
  };
}

/** The values the tool's destination and URL rules name: read before the other arguments. */
function destinationArguments(s: CallState): { pointer: string; value: unknown }[] {
  const out: { pointer: string; value: unknown }[] = [];
  for (const rule of s.def.destinations ?? []) out.push(...destinationValues(s.callArgs, rule));
  for (const target of s.compiled.targets) {
    if (target.kind === 'url') out.push(...valuesAt(s.callArgs, target.pointer));
  }
  return out;
}

/**
 * Looks up which of the call's argument values the run or the principal's window first saw in
 * an untrusted result and sets `s.untrustedDestinations`, and the instruction-like text that
 * reached them from elsewhere (`s.injectionElsewhere`); undefined (no query) for a read.
 */
export function lookUpUntrustedDestinations(s: CallState): Promise<void> | undefined {
  const escalating = ESCALATING_CLASSES.has(s.def.action_class);
  const injectionCovered =
    s.session.injection_seen !== 1 &&
    (s.deps.afterInjection.action_classes.includes(s.def.action_class) ||
      (s.def.action_class === 'read' && s.deps.afterInjection.reads.includes(s.def.data_access)));
  if (!escalating && !injectionCovered) return undefined;
  return lookUp(s, escalating, injectionCovered);
}

async function lookUp(s: CallState, escalating: boolean, injectionCovered: boolean): Promise<void> {
  const scopes = literalScopes(s);
  const sessions = s.deps.sessions;
  if (!escalating) {
    const sources = await sessions.injectionSources(scopes);
    if (sources.length > 0) s.injectionElsewhere = sources;
    return;
  }
  const scan = scanArgumentLiterals(s.callArgs, destinationArguments(s));
  const candidates = scan.literals;
  // One read for both questions (the sightings, and the injection marks when asked).
  const { sightings, injectionSources } = await sessions.provenanceLookUp(
    scopes,
    [...candidates.map((c) => c.hash), UNRECORDED_HASH],
    injectionCovered,
  );
  if (injectionSources.length > 0) s.injectionElsewhere = injectionSources;
  const at = new Map(candidates.map((c) => [c.hash, c.pointer]));
  const found: UntrustedDestination[] = sightings.map((r) => sightingOf(r, at.get(r.hash) ?? ''));
  if (!scan.complete && found.length === 0) {
    // More literals than were looked up: unseen is not clean when anything untrusted is on record.
    const any = await sessions.anyDestinationSighting(scopes);
    if (any !== undefined) found.push({ ...sightingOf(any, ''), kind: UNCHECKED_KIND });
  }
  if (found.length > 0) s.untrustedDestinations = found;
}

function sightingOf(r: LiteralSighting, argument: string): UntrustedDestination {
  return {
    kind: r.kind,
    argument,
    tool_id: r.tool_id,
    call_id: r.call_id,
    first_seen_at: r.first_seen_at,
  };
}

/** The kinds of the call's untrusted destinations, for Cedar (`context.untrusted_destinations`). */
export function untrustedDestinationKinds(s: CallState): string[] {
  const list = s.untrustedDestinations;
  if (list.length === 0) return [];
  return [...new Set(list.map((d) => d.kind))];
}

const NOTHING_ENTERS: LiteralScan = Object.freeze({ literals: [], complete: true });

/**
 * The literals an untrusted result brings into the run: none for a trusted one, unless
 * instruction-like text was found in it (then it is untrusted text, `carriesUntrustedText`).
 * An incomplete scan adds the `unrecorded` mark, so that what was not recorded still escalates.
 */
export function literalsEntering(
  trust: TrustLabel | undefined,
  output: unknown,
): readonly { readonly kind: string; readonly hash: string }[] {
  const scan =
    trust !== undefined && carriesUntrustedText(trust)
      ? scanResultLiterals(output)
      : NOTHING_ENTERS;
  return scan.complete
    ? scan.literals
    : [...scan.literals, { kind: UNRECORDED_KIND, hash: UNRECORDED_HASH }];
}

/** Records them for the run (first sighting stays) and the principal's window (renewed). */
export function recordLiterals(
  s: CallState,
  literals: readonly { readonly kind: string; readonly hash: string }[],
): Promise<void> {
  return s.deps.sessions.recordDestinationLiterals(sightingAt(s), literals);
}

/** Records that this result held instruction-like text, for the run and the principal's window. */
export function recordInjection(s: CallState): Promise<void> {
  return s.deps.sessions.recordInjection(sightingAt(s));
}

function sightingAt(s: CallState) {
  return { ...literalScopes(s), toolId: s.detail.id, callId: s.callId, at: s.now };
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
