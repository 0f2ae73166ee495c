/**
 * @module What opening a gateway hands back: a front gets a `Toolgate` (its APIs only); this
 * repository's tests and benchmarks get the whole wiring, a `Gateway` (docs/architecture.md §6).
 */
import type { AdminApi, AgentApi, SecurityEvents } from '../api/index.js';
import type { AgentPrincipal } from '../core/index.js';
import type { CatalogService, Discovery, SecurityReviewDesk } from '../domain/catalog/index.js';
import type { CredentialBroker, SecretAdmin } from '../domain/credentials/index.js';
import type { ApprovalDesk, ChangeDesk, OperatorSecondFactors } from '../domain/decisions/index.js';
import type { AgentKeys, AgentService, UserService } from '../domain/identity/index.js';
import type { OperatorService } from '../domain/operators/index.js';
import type { DestinationSets } from '../domain/policy/index.js';
import type { SessionService } from '../domain/sessions/index.js';
import type { ProviderService } from '../execution/providers/index.js';
import type { SandboxService } from '../execution/sandbox/index.js';
import type { Gate } from '../gate/index.js';
import type { ApplyService } from '../operations/config/index.js';
import type { DetectorEngine } from '../operations/detectors/index.js';
import type { HealthMonitor } from '../operations/health/index.js';
import type { GatewayMetrics } from '../operations/metrics/index.js';
import type { DecisionNotices, Notifier } from '../operations/notify/index.js';
import type { OwnerChannels, OwnerNotices } from '../operations/owners/index.js';
import type { ReportService } from '../operations/reports/index.js';
import type { AuditLog } from '../records/audit/index.js';
import { eventRecord, type listEvents, type Store } from '../records/store/index.js';
import type { AgentAuth } from './wire-agent-auth.js';
import type { CredentialsWing } from './wire-credentials.js';
import type { DomainWing } from './wire-domain.js';
import type { ExecutionWing, SandboxWing } from './wire-execution.js';
import type { ObserversWing, OperationsWing } from './wire-operations.js';
import type { RecordsWing } from './wire-records.js';
import type { SessionsWing } from './wire-sessions.js';
/**
 * What a front is given: the agent API (REST agent routes, MCP), the admin API (REST admin
 * routes, the CLI) and the security-event sink (MCP's refusals). Nothing here is the store, the
 * sandbox, the credential broker or the gate itself.
 */
export interface Toolgate {
  readonly agent: AgentApi;
  readonly admin: AdminApi;
  readonly security: SecurityEvents;
  /**
   * Records the calls still running as interrupted (no call starts after), flushes the audit log
   * and closes everything the gateway opened.
   */
  close(): Promise<void>;
}

/**
 * The whole wiring: every service, including the ones no front may hold (the sandbox, the
 * credential broker, the gate). Tests and benchmarks use it; fronts get a `Toolgate`.
 */
export interface Gateway extends Toolgate {
  readonly store: Pick<Store, 'dialect' | 'location' | 'ping'>;
  readonly catalog: CatalogService;
  /** Security reviews, read side: the pending queue and one version's reviews. */
  readonly reviews: SecurityReviewDesk;
  readonly discovery: Discovery;
  readonly agents: AgentService;
  readonly keys: AgentKeys;
  readonly users: UserService;
  readonly sessions: SessionService;
  readonly approvals: ApprovalDesk;
  readonly gate: Gate;
  /** The principal a bearer credential proves (AgentAuthenticator), or null. */
  authenticate(token: string, peer?: string): Promise<AgentPrincipal | null>;
  readonly config: ApplyService;
  /** Four-eyes changes: privileged grants and irreversible tools waiting for approvers. */
  readonly changes: ChangeDesk;
  /** Operators' second factors: enrolment (sealed in the store), checks, lockout and unlock. */
  readonly secondFactor: OperatorSecondFactors;
  /** Sandbox drivers: `command` tools run here; `doctor()` reports what works on this host. */
  readonly sandbox: SandboxService;
  /** Upstream MCP providers: register, refresh, classify (the mcp runtime forwards the calls). */
  readonly providers: ProviderService;
  readonly events: {
    list(filter: {
      subject?: string;
      afterSeq?: number;
      limit: number;
    }): ReturnType<typeof listEvents>;
  };
  /** Catalog and identity revisions: they change whenever what any session may see changes. */
  revisions(): Promise<{ catalog: number; identity: number }>;
  /** Secrets, admin side only: set, rotate, delete, list; nothing here returns a value. */
  readonly secrets: SecretAdmin;
  /** Opens a tool's own credential for one call; the gate calls it only after the gate passed. */
  readonly credentials: CredentialBroker;
  /**
   * The tamper-evident audit log: checkpoints, proofs, verification, export; `writer.append` adds
   * a record (e.g. an alert) to the chain with group commit.
   */
  readonly audit: Pick<
    AuditLog,
    | 'checkpoint'
    | 'latestCheckpoint'
    | 'inclusionProof'
    | 'consistencyProof'
    | 'verify'
    | 'exportBundle'
    | 'verifierKey'
    | 'origin'
    | 'writer'
  >;
  /** Prometheus metrics of this gateway (its own registry). */
  readonly metrics: GatewayMetrics;
  /** Live destination sets (admin-managed or from a directory tool). */
  readonly destinationSets: DestinationSets;
  /** The detector engine (C13); null when detectors are switched off. */
  readonly detectors: DetectorEngine | null;
  /** Tells reviewers' channels of pending approvals, quarantines and alerts (C8, C13). */
  readonly notifier: Notifier;
  /** Governance reports (capability register, access matrix, invocations, deprecation, orphans). */
  readonly reports: ReportService;
  /** Owner teams' notification channels, and the notices sent to them (C16). */
  readonly ownerChannels: OwnerChannels;
  /** Tells owner teams about their tools; `toolEvent` is the one entry (the health monitor's). */
  readonly ownerNotices: OwnerNotices;
  /** Tells reviewers of four-eyes changes, grant requests and security reviews (notify/). */
  readonly decisionNotices: DecisionNotices;
  /** Operator accounts, local login, single sign-on upserts, personal tokens. */
  readonly operators: OperatorService;
  /** The health monitor (C14): probes, scores, breakers, overrides, coverage; `on` for events. */
  readonly health: HealthMonitor;
}

/** Every wing's services, as `openGateway` wired them. */
export interface Wings {
  readonly store: Store;
  readonly host: SandboxWing;
  readonly domain: DomainWing;
  readonly credentials: CredentialsWing;
  readonly records: RecordsWing;
  readonly sessions: SessionsWing;
  readonly execution: ExecutionWing;
  readonly health: HealthMonitor;
  readonly gate: Gate;
  readonly operations: OperationsWing;
  readonly observers: ObserversWing;
  readonly security: SecurityEvents & { close(): Promise<void> };
  readonly auth: AgentAuth;
}

/** The whole wiring under the names tests and benchmarks use; fronts get only `Toolgate`. */
export function gatewayOf(
  w: Wings,
  fronts: Pick<Gateway, 'agent' | 'admin' | 'close'>,
  revisions: Gateway['revisions'],
): Gateway {
  const { domain, operations } = w;
  return {
    ...fronts,
    security: w.security,
    store: w.store,
    catalog: domain.catalog,
    reviews: domain.reviews,
    discovery: domain.discovery,
    agents: domain.agents,
    keys: domain.keys,
    authenticate: w.auth.authenticate,
    users: domain.users,
    sessions: w.sessions.sessions,
    approvals: domain.approvals,
    gate: w.gate,
    changes: operations.changes,
    secondFactor: domain.secondFactor,
    config: operations.config,
    sandbox: w.host.sandbox,
    providers: w.execution.providers,
    events: eventRecord(w.store.db),
    revisions,
    secrets: w.credentials.secrets,
    credentials: w.credentials.credentials,
    audit: w.records.audit,
    metrics: w.observers.metrics,
    destinationSets: domain.destinationSets,
    detectors: operations.detectors,
    notifier: w.observers.notifier,
    reports: operations.reports,
    ownerChannels: operations.ownerChannels,
    ownerNotices: operations.ownerNotices,
    decisionNotices: operations.decisionNotices,
    operators: domain.operators,
    health: w.health,
  };
}
