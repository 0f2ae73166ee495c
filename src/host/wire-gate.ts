/**
 * @module Wires the gate (docs/architecture.md §3): the one pipeline every front calls, over the
 * domain, the sessions, the runtimes and the audit writer. Directory destination sets are read
 * by toolgate itself, through the gate's `directoryReader` (never an agent's).
 */
import type { SecurityEvents } from '../api/index.js';
import type { CredentialBroker } from '../domain/credentials/index.js';
import { CallCounters } from '../domain/limits/index.js';
import type { ProviderService } from '../execution/providers/index.js';
import type { RuntimeRegistry } from '../execution/runtimes/index.js';
import { Gate } from '../gate/index.js';
import type { HealthMonitor } from '../operations/health/index.js';
import type { AuditLog } from '../records/audit/index.js';
import { readRevisions, type Store } from '../records/store/index.js';
import { clockOf, type ToolgateOptions } from './toolgate-options.js';
import type { CheckedConfig } from './wire-config.js';
import type { DomainWing } from './wire-domain.js';
import type { SessionsWing } from './wire-sessions.js';

export function wireGate(
  options: ToolgateOptions,
  store: Store,
  parts: {
    readonly domain: DomainWing;
    readonly sessions: SessionsWing;
    readonly execution: {
      readonly runtimes: RuntimeRegistry;
      readonly providers: Pick<ProviderService, 'recheck'>;
    };
    readonly credentials: { readonly credentials: CredentialBroker };
    readonly health: HealthMonitor;
    readonly records: { readonly audit: AuditLog };
    readonly config: CheckedConfig;
    readonly security: Pick<SecurityEvents, 'record'>;
  },
): Gate {
  const { catalog, agents, users, approvals, policies, destinationSets } = parts.domain;
  const { sessions, governedUris, idempotency } = parts.sessions;
  const fixed = options.policy;
  const gate = new Gate({
    health: parts.health,
    governedUris,
    audit: parts.records.audit.writer,
    counters: new CallCounters(store),
    idempotency,
    revisions: () => readRevisions(store.db),
    revisionSignal: store.fleet,
    // A provider another process changed: its spec and processes follow the catalog revision.
    catalogFollowers: [() => parts.execution.providers.recheck()],
    catalog,
    agents,
    users,
    sessions,
    approvals,
    runtimes: parts.execution.runtimes,
    credentials: parts.credentials.credentials,
    // A fixed policy engine (library use) instead of the stored policies.
    policies: fixed ? async () => fixed : () => policies.engine(),
    afterInjection: parts.config.afterInjection,
    destinationSets,
    ...(options.oauth ? { oauth: options.oauth } : {}),
    // A step-up asked before any session was named is an event of the principal (scope step).
    principalEvents: (action, subject, details) => parts.security.record(action, subject, details),
    ...clockOf(options),
    // Tracing off: no tracer, and the gate's one test per call is all it costs.
    ...(parts.config.tracing.tracer ? { tracer: parts.config.tracing.tracer } : {}),
  });
  return gate;
}
