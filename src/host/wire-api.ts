/**
 * @module Wires the door (docs/architecture.md §6): the agent API and the admin API. Each holds
 * only the members it names, bound once here (not per call): what a front is not given (a
 * provider's `call`, the audit `writer`, a session's `suspend`) is not reachable.
 */
import {
  type AdminApi,
  AGENTS_ADMIN,
  type AgentApi,
  APPROVALS_ADMIN,
  AUDIT_ADMIN,
  AUDIT_RECORDS_ADMIN,
  adminSweep,
  CATALOG_ADMIN,
  CHANGES_ADMIN,
  CLASSIFIED_ADMIN,
  CONFIG_ADMIN,
  CONSOLE_SESSIONS_ADMIN,
  DECISIONS_ADMIN,
  DESTINATION_SETS_ADMIN,
  DISCOVERY_ADMIN,
  DISCOVERY_AGENT,
  ENTRIES_AGENT,
  expose,
  KEYS_ADMIN,
  METRICS_ADMIN,
  OPERATORS_ADMIN,
  OWNER_CHANNELS_ADMIN,
  PASSKEYS_ADMIN,
  PROVIDERS_ADMIN,
  REPORTS_ADMIN,
  REVIEWS_ADMIN,
  type RevisionAnnouncements,
  RUNS_ADMIN,
  RUNS_AGENT,
  SECOND_FACTOR_ADMIN,
  SECRETS_ADMIN,
  SESSIONS_ADMIN,
  SESSIONS_AGENT,
  TOOL_HEALTH_ADMIN,
  USERS_ADMIN,
} from '../api/index.js';
import type { SecretsService } from '../domain/credentials/index.js';
import { DecisionProofs } from '../domain/decisions/index.js';
import { ConsoleSessions } from '../domain/operators/index.js';
import type { ProviderService } from '../execution/providers/index.js';
import type { SandboxService } from '../execution/sandbox/index.js';
import type { Gate } from '../gate/index.js';
import type { HealthMonitor } from '../operations/health/index.js';
import type { GatewayMetrics } from '../operations/metrics/index.js';
import { AuditSearch } from '../records/audit/index.js';
import { eventRecord, FLEET_CHANNELS, type Fleet, type Store } from '../records/store/index.js';
import { systemClockOf, type ToolgateOptions } from './toolgate-options.js';
import type { AgentAuth } from './wire-agent-auth.js';
import type { DomainWing } from './wire-domain.js';
import type { OperationsWing } from './wire-operations.js';
import type { RecordsWing } from './wire-records.js';
import type { SessionsWing } from './wire-sessions.js';

export function agentApi(parts: {
  readonly auth: AgentAuth;
  readonly sessions: SessionsWing;
  readonly gate: Gate;
  readonly revisions: AgentApi['revisions'];
  readonly fleet: Fleet;
}): AgentApi {
  const { auth, gate } = parts;
  const { sessions, runs, entries, agentDiscovery, sessionApprovals, callOutcomes } =
    parts.sessions;
  const { waitingOnApproval } = parts.sessions;
  return Object.freeze({
    authenticate: auth.authenticate,
    oauth: auth.oauthFront,
    sessions: expose(sessions, SESSIONS_AGENT),
    runs: expose(runs, RUNS_AGENT),
    entries: expose(entries, ENTRIES_AGENT),
    discovery: expose(agentDiscovery, DISCOVERY_AGENT),
    invoke: gate.invoke.bind(gate),
    stepUp: auth.stepUp,
    requestStates: auth.requestStates,
    revisions: parts.revisions,
    revisionAnnouncements: announcementsOf(parts.fleet),
    approvalStatus: sessionApprovals.status.bind(sessionApprovals),
    awaitApproval: sessionApprovals.await.bind(sessionApprovals),
    callOutcome: callOutcomes.outcome.bind(callOutcomes),
    waitingOnApproval,
  });
}

/** The fleet's revision notifications, as the agent API announces them. */
function announcementsOf(fleet: Fleet): RevisionAnnouncements {
  return {
    get listening() {
      return fleet.listening;
    },
    onMoved(fn) {
      const heard = fleet.listen(FLEET_CHANNELS.revisions, () => fn());
      const resumed = fleet.onListening(() => fn());
      return () => {
        heard();
        resumed();
      };
    },
  };
}

export function adminApi(
  options: ToolgateOptions,
  store: Store,
  parts: {
    readonly domain: DomainWing;
    readonly sessions: SessionsWing;
    readonly records: RecordsWing;
    readonly operations: OperationsWing;
    readonly credentials: { readonly secrets: SecretsService };
    readonly execution: { readonly providers: ProviderService };
    readonly host: { readonly sandbox: SandboxService };
    readonly gate: Gate;
    readonly health: HealthMonitor;
    readonly observers: { readonly metrics: GatewayMetrics };
  },
): AdminApi {
  const { domain, records, operations, gate } = parts;
  const { sandbox } = parts.host;
  const { sessions, runs } = parts.sessions;
  return Object.freeze({
    health: Object.freeze({
      dialect: store.dialect,
      location: store.location,
      ping: () => store.ping(),
    }),
    catalog: expose(domain.catalog, CATALOG_ADMIN),
    reviews: expose(domain.reviews, REVIEWS_ADMIN),
    discovery: expose(domain.discovery, DISCOVERY_ADMIN),
    agents: expose(domain.agents, AGENTS_ADMIN),
    keys: expose(domain.keys, KEYS_ADMIN),
    users: expose(domain.users, USERS_ADMIN),
    sessions: expose(sessions, SESSIONS_ADMIN),
    runs: expose(runs, RUNS_ADMIN),
    approvals: expose(domain.approvals, APPROVALS_ADMIN),
    changes: expose(operations.changes, CHANGES_ADMIN),
    secondFactor: expose(domain.secondFactor, SECOND_FACTOR_ADMIN),
    passkeys: expose(domain.passkeys, PASSKEYS_ADMIN),
    decisions: expose(new DecisionProofs(store.db), DECISIONS_ADMIN),
    config: expose(operations.config, CONFIG_ADMIN),
    providers: expose(parts.execution.providers, PROVIDERS_ADMIN),
    events: eventRecord(store.db),
    secrets: expose(parts.credentials.secrets, SECRETS_ADMIN),
    audit: expose(records.audit, AUDIT_ADMIN),
    auditRecords: expose(new AuditSearch(store), AUDIT_RECORDS_ADMIN),
    classified: expose(records.classified, CLASSIFIED_ADMIN),
    metrics: expose(parts.observers.metrics, METRICS_ADMIN),
    destinationSets: expose(domain.destinationSets, DESTINATION_SETS_ADMIN),
    reports: expose(operations.reports, REPORTS_ADMIN),
    ownerChannels: expose(operations.ownerChannels, OWNER_CHANNELS_ADMIN),
    operators: expose(domain.operators, OPERATORS_ADMIN),
    consoleSessions: expose(new ConsoleSessions(store.db, options.clock), CONSOLE_SESSIONS_ADMIN),
    toolHealth: expose(parts.health, TOOL_HEALTH_ADMIN),
    doctor: () => sandbox.doctor(),
    sweep: adminSweep({
      gate,
      classified: records.classified,
      store,
      clock: systemClockOf(options),
    }),
  });
}
