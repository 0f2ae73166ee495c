/**
 * @module Wires operations, off the call path (docs/architecture.md §2): metrics and reviewer
 * notifications, the health monitor (C14), the detectors (C13), the four-eyes change desk and
 * `apply -f`, governance reports, and owner teams' channels and notices (C16).
 */
import type { CredentialBroker, MasterKey } from '../domain/credentials/index.js';
import {
  type ApprovalDesk,
  ChangeDesk,
  recordPasskeyRequirement,
} from '../domain/decisions/index.js';
import type { SessionService } from '../domain/sessions/index.js';
import type { ProviderService } from '../execution/providers/index.js';
import type { HttpToolRunner, RuntimeRegistry } from '../execution/runtimes/index.js';
import { ApplyService } from '../operations/config/index.js';
import { DetectorEngine } from '../operations/detectors/index.js';
import { HealthMonitor, ToolProber } from '../operations/health/index.js';
import { GatewayMetrics } from '../operations/metrics/index.js';
import { DecisionNotices, Notifier } from '../operations/notify/index.js';
import {
  OwnerChannels,
  OwnerNotices,
  toolOwnership,
  unhealthyToOwners,
} from '../operations/owners/index.js';
import { healthStates, ReportService } from '../operations/reports/index.js';
import type { AuditLog } from '../records/audit/index.js';
import type { Store } from '../records/store/index.js';
import { clockOf, type ToolgateOptions } from './toolgate-options.js';
import type { CheckedConfig } from './wire-config.js';
import type { DomainWing } from './wire-domain.js';

export type ObserversWing = ReturnType<typeof wireObservers>;
export type OperationsWing = Awaited<ReturnType<typeof wireOperations>>;

/**
 * Metrics and reviewer notifications (C8, C13): notification outcomes are counted, and the
 * approvals' states are read when metrics are scraped.
 */
export function wireObservers(config: CheckedConfig, approvals: () => ApprovalDesk) {
  const metrics = new GatewayMetrics({
    approvalStates: () => approvals().statusCounts(),
    traceSpans: () => config.tracing.spanCounts(),
  });
  const notifier = new Notifier(config.notify, config.outbound, (kind, outcome) =>
    metrics.notification(kind, outcome),
  );
  return { metrics, notifier };
}

/**
 * The health monitor probes through the same runtimes (and so sandbox and egress rules) the gate
 * runs calls through, with each tool's own credential (docs/architecture.md §8, C14).
 */
export function wireHealth(
  options: ToolgateOptions,
  store: Store,
  parts: {
    readonly domain: DomainWing;
    readonly host: { readonly egress: { readonly http: HttpToolRunner } };
    readonly execution: { readonly runtimes: RuntimeRegistry; readonly providers: ProviderService };
    readonly credentials: { readonly credentials: CredentialBroker };
    readonly observers: ObserversWing;
    readonly config: CheckedConfig;
  },
): HealthMonitor {
  const { runtimes, providers } = parts.execution;
  const { credentials } = parts.credentials;
  const { http } = parts.host.egress;
  return new HealthMonitor({
    store,
    catalog: parts.domain.catalog,
    prober: new ToolProber({ runtimes, credentials, http, providers }),
    config: parts.config.health,
    registry: parts.observers.metrics.registry,
    ...clockOf(options),
    ...(options.providers?.onError ? { onError: options.providers.onError } : {}),
  });
}

/** Started once the gate exists: detectors, health probes and owner notices begin here. */
export async function wireOperations(
  options: ToolgateOptions,
  store: Store,
  parts: {
    readonly domain: DomainWing;
    readonly sessions: { readonly sessions: SessionService };
    readonly execution: { readonly providers: ProviderService };
    readonly records: { readonly audit: AuditLog };
    readonly health: HealthMonitor;
    readonly observers: ObserversWing;
    readonly config: CheckedConfig;
    /** Seals owner channels' URLs (the master key, loaded on first use). */
    readonly loadMasterKey: () => MasterKey;
  },
) {
  const { domain, health, config } = parts;
  const { audit } = parts.records;
  const { metrics, notifier } = parts.observers;
  const { catalog, agents, users, policies, secondFactor } = domain;
  const clock = clockOf(options);
  // Observability consumes committed audit records, off the call path.
  audit.writer.onCommitted((batch, commitMs) => metrics.observeCommitted(batch, commitMs));
  catalog.onQuarantine((q) => notifier.toolQuarantined(q));
  const detectors =
    config.detectors === null
      ? null
      : new DetectorEngine({
          store,
          catalog,
          agents,
          sessions: parts.sessions.sessions,
          audit: audit.writer,
          config: config.detectors,
          outbound: config.outbound,
          sink: metrics,
          onAlert: (alert, id, suspended) => notifier.alertRaised({ ...alert, id, suspended }),
          ...clock,
        });
  await detectors?.start();
  // `health: false` starts no probes: state comes from live calls only.
  await (options.health === false ? health.sync() : health.start());
  // A start's explicit passkeys.require_for_irreversible holds for every process on the database.
  await recordPasskeyRequirement(store.db, options.passkeys?.required);
  const changes = new ChangeDesk(store.db, catalog, agents, {
    ...clock,
    secondFactors: secondFactor,
    passkeys: domain.passkeys,
    passkeyRequired: options.passkeys?.required ?? false,
  });
  const teams = options.teams ?? [];
  const sources = { db: store.db, catalog, agents, users, teams, health: healthStates(health) };
  const reports = new ReportService(sources, options.clock);
  const ownerChannels = new OwnerChannels(
    store.db,
    config.outbound,
    parts.loadMasterKey,
    options.clock,
  );
  const apply = new ApplyService({
    catalog,
    agents,
    users,
    policies,
    changes,
    providers: parts.execution.providers,
    destinationSets: domain.destinationSets,
    operators: domain.operators,
    ownerChannels,
  });
  const ownerNotices = new OwnerNotices({
    db: store.db,
    channels: ownerChannels,
    ...toolOwnership(catalog, reports),
    delivery: config.notify,
    outbound: config.outbound,
    sink: metrics,
    ...clock,
    ...(options.owners ? { options: options.owners } : {}),
  });
  // Error rates come from the call outcomes already committed: no query per call.
  audit.writer.onCommitted((batch) => ownerNotices.observe(batch));
  await ownerNotices.init();
  ownerNotices.start();
  health.on(unhealthyToOwners(ownerNotices));
  // Four-eyes changes, grant requests and security reviews reach the approvals' channels.
  const decisionNotices = new DecisionNotices({ db: store.db, notifier });
  await decisionNotices.start();
  catalog.onCommit(() => void decisionNotices.check().catch(() => {}));
  return {
    detectors,
    changes,
    config: apply,
    reports,
    ownerChannels,
    ownerNotices,
    decisionNotices,
  };
}
