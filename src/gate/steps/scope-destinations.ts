/**
 * @module The destination values a scoped approval binds (docs/operators-and-approvals.md,
 * "Scoped approvals"): every value the tool's `destinations` rules name, in the checked form the
 * `policy` step left in the arguments, and every URL argument by its host — the same arguments
 * the provenance look-up reads first (provenance.ts). A later call is covered only when these are
 * exactly the approved call's; its other arguments may differ.
 */
import type { ScopeCall, ScopeDestination } from '../../domain/decisions/index.js';
import { destinationsHash } from '../../domain/decisions/index.js';
import { destinationValues, valuesAt } from '../../domain/policy/index.js';
import type { CallState } from './step.js';

/** A URL's host as the WHATWG parser reads it; the text itself when it does not parse. */
function hostOf(value: string): string {
  try {
    return new URL(value).host;
  } catch {
    return value;
  }
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value ?? null);
}

/** The call's destination values, one per pointer, sorted by pointer. */
export function scopeDestinations(s: CallState): ScopeDestination[] {
  const at = new Map<string, string>();
  for (const rule of s.def.destinations ?? []) {
    for (const d of destinationValues(s.callArgs, rule)) {
      if (d.value === null) continue;
      at.set(d.pointer, rule.kind === 'url' ? hostOf(text(d.value)) : text(d.value));
    }
  }
  for (const target of s.compiled.targets) {
    if (target.kind !== 'url') continue;
    for (const d of valuesAt(s.callArgs, target.pointer)) at.set(d.pointer, hostOf(text(d.value)));
  }
  return [...at.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([argument, value]) => ({ argument, value }));
}

/**
 * The scope question for this call, or null when no scope may cover it: an irreversible or
 * permission-changing call, one approved out of band, or one that waits because injection text
 * or an untrusted destination reached its run (a reviewer sees that call alone).
 */
export function scopeCallOf(
  s: CallState,
  destinations: readonly ScopeDestination[],
  escalated: boolean,
): ScopeCall | null {
  const cls = s.def.action_class;
  if (escalated || cls === 'irreversible' || cls === 'permission_change') return null;
  if (s.def.approval.out_of_band) return null;
  return {
    agentId: s.ctx.principal.agentId,
    userId: s.session.user_id,
    credential: s.session.credential,
    runId: s.session.run_id,
    toolId: s.detail.id,
    toolVersion: s.detail.version,
    destinationsHash: destinationsHash(destinations),
    cents: s.cents,
  };
}
