/**
 * @module The security events every front records (SecurityEvents): refusals no service sees,
 * written to the events table and the audit chain. A refusal of someone not authenticated names
 * what they sent (`caller`): kept only as keyed hashes (invariant 16), like a call's arguments.
 * Other events name the organisation's own identifiers (agent, user, credential ids), kept as they
 * are. docs/security-model.md, "Personal data and the audit log".
 */
import { type Clock, systemActor } from '../core/index.js';
import type { AuditPseudonyms } from '../records/audit/index.js';
import { appendEvent, type Store } from '../records/store/index.js';
import type { SecurityEvents } from './agent-api.js';
import { RefusalSampler } from './refusal-sampler.js';

export function securityEvents(
  store: Pick<Store, 'db'>,
  pseudonyms: AuditPseudonyms,
  clock: Clock,
): SecurityEvents & { close(): Promise<void> } {
  const events: Pick<SecurityEvents, 'record' | 'pseudonym'> = {
    pseudonym: (value) => pseudonyms.token(value),
    record: (action, subject, details, caller) => {
      const actor = systemActor('security');
      if (caller === undefined)
        return appendEvent(store.db, actor, clock(), { action, subject, details });
      const sent = caller.sent?.filter((v) => v.length > 0) ?? [];
      // Never the input: maskDetails builds a new object, the hashed fields are set on it.
      const masked = { ...(pseudonyms.maskDetails(details, sent) as Record<string, unknown>) };
      for (const [k, v] of Object.entries(caller.hashed ?? {})) masked[k] = pseudonyms.token(v);
      return appendEvent(store.db, actor, clock(), { action, subject, details: masked });
    },
  };
  // Refusals anyone may repeat (round 7, F3): bounded per peer and value, never one per request.
  const sampler = new RefusalSampler(events);
  return {
    ...events,
    sampled: (action, subject, details, { peer, value }) =>
      sampler.record(
        action,
        { ...details, ...(peer !== undefined ? { remote: pseudonyms.token(peer) } : {}) },
        undefined,
        { ...(peer !== undefined ? { peer } : {}), value, subject },
      ),
    close: () => sampler.stop(),
  };
}
