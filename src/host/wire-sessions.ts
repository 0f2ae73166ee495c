/**
 * @module Wires the sessions (docs/architecture.md §2, `domain/sessions/`): sessions and runs,
 * agent discovery within the caller's permitted set (§6), governed resource URIs, idempotency
 * keys, and the agents' own questions about their approvals and keyed calls. Tool health is read
 * through the `HealthReader` port the domain owns.
 */
import { type HealthReader, ScopedDiscovery } from '../domain/catalog/index.js';
import { SessionApprovals } from '../domain/decisions/index.js';
import { IdempotencyStore, SessionCallOutcomes } from '../domain/idempotency/index.js';
import {
  type AgentCaps,
  AgentDiscovery,
  GovernedUris,
  oauthReach,
  RunService,
  SessionEntries,
  SessionService,
  sessionsWaitingOnApproval,
} from '../domain/sessions/index.js';
import type { Store } from '../records/store/index.js';
import { systemClockOf, type ToolgateOptions } from './toolgate-options.js';
import type { DomainWing } from './wire-domain.js';

export type SessionsWing = ReturnType<typeof wireSessions>;

export function wireSessions(
  options: ToolgateOptions,
  store: Store,
  { catalog, agents, users, approvals, approvalWaits }: DomainWing,
  { caps }: { readonly caps: AgentCaps },
  /** The health monitor's reading (C14): unavailable tools leave permitted sets and rankings. */
  health: HealthReader,
) {
  const sessions = new SessionService(
    store,
    catalog,
    agents,
    users,
    options.clock,
    caps,
    health,
    options.oauth ? oauthReach(options.oauth.scopes) : null,
  );
  const governedUris = new GovernedUris(store);
  const idempotency = new IdempotencyStore(store.db, options.clock);
  return {
    sessions,
    runs: new RunService(store, sessions, options.clock),
    // Agent discovery searches only the caller's permitted set (docs/architecture.md §6), ranked
    // by health (C5, C14) unless another source stands in for this gateway's monitor.
    agentDiscovery: new AgentDiscovery(
      store,
      catalog,
      agents,
      sessions,
      new ScopedDiscovery(catalog, options.discoveryHealth ?? health),
    ),
    entries: new SessionEntries(sessions, catalog),
    governedUris,
    idempotency,
    sessionApprovals: new SessionApprovals(sessions, approvals, approvalWaits),
    callOutcomes: new SessionCallOutcomes(sessions, idempotency),
    waitingOnApproval: (ids: readonly string[]) =>
      sessionsWaitingOnApproval(store.db, ids, systemClockOf(options)()),
  };
}
