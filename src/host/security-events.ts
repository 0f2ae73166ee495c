/**
 * @module The security events every front records (SecurityEvents): refusals no service sees,
 * written to the events table and the audit chain. A refusal of someone not authenticated names
 * what they sent (`caller`): kept only as keyed hashes (invariant 16), like a call's arguments.
 * Other events name the organisation's own identifiers (agent, user, credential ids), kept as they
 * are. docs/security-model.md, "Personal data and the audit log".
 */
import type { SecurityEvents } from '../api/index.js';
import { type Clock, systemActor } from '../core/index.js';
import type { AuditPseudonyms } from '../records/audit/index.js';
import { appendEvent, type Store } from '../records/store/index.js';

export function securityEvents(
  store: Pick<Store, 'db'>,
  pseudonyms: AuditPseudonyms,
  clock: Clock,
): SecurityEvents {
  return {
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
}
