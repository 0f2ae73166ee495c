/**
 * @module What an admin front (REST admin routes, the CLI) may use: the catalog, agents, keys,
 * users and grants, `apply -f`, the changes and approvals desks' decisions, second factors,
 * secrets (never their values), providers' administration, the audit log's proofs and
 * verification, reports, metrics and the host's sandbox doctor. No member is the store, the
 * sandbox, the credential broker or the gate: an admin front decides, it never runs a tool
 * (docs/architecture.md §6).
 */

import type { CatalogService, Discovery, SecurityReviewDesk } from '../domain/catalog/index.js';
import type { SecretAdmin } from '../domain/credentials/index.js';
import type {
  ApprovalDesk,
  ChangeDesk,
  DecisionProofs,
  OperatorPasskeys,
  OperatorSecondFactors,
} from '../domain/decisions/index.js';
import type { AgentKeys, AgentService, UserService } from '../domain/identity/index.js';
import type { ConsoleSessions, OperatorService } from '../domain/operators/index.js';
import type { DestinationSets } from '../domain/policy/index.js';
import type { RunService, SessionService } from '../domain/sessions/index.js';
import type { ProviderService } from '../execution/providers/index.js';
import type { Gate } from '../gate/index.js';
import type { ApplyService } from '../operations/config/index.js';
import type { HealthMonitor } from '../operations/health/index.js';
import type { GatewayMetrics } from '../operations/metrics/index.js';
import type { OwnerChannels } from '../operations/owners/index.js';
import type { ReportService } from '../operations/reports/index.js';
import type { AuditLog, AuditSearch, ClassifiedArguments } from '../records/audit/index.js';
import type { Dialect, listEvents } from '../records/store/index.js';
import type { DriverReport } from './host-admin.js';

/** The members of each service an admin front is given: one list each, for the type and the object. */
export const CATALOG_ADMIN = [
  'register',
  'list',
  'versions',
  'get',
  'activate',
  'deprecate',
  'extendDeprecation',
  'retire',
  'quarantine',
  'release',
  'sweepLifecycle',
  'review',
  'reviewPasskeyOptions',
] as const;
/** The reviewers' queue and one version's reviews (the decision is `catalog.review`). */
export const REVIEWS_ADMIN = ['page', 'of', 'get', 'countPending'] as const;
export const DISCOVERY_ADMIN = ['search'] as const;
export const TOOL_HEALTH_ADMIN = [
  'status',
  'list',
  'coverage',
  'probeNow',
  'setOverride',
  'clearOverride',
] as const;
export const AGENTS_ADMIN = ['list', 'get', 'grants', 'revoke'] as const;
export const KEYS_ADMIN = ['issue', 'revoke', 'list'] as const;
export const USERS_ADMIN = ['get', 'list'] as const;
export const SESSIONS_ADMIN = ['inspect', 'live', 'suspendBy', 'closeBy'] as const;
/** Runs, operator side: the open ones and an operator's revoke of any (the holder's is agent-side). */
export const RUNS_ADMIN = ['open', 'revokeBy'] as const;
export const APPROVALS_ADMIN = [
  'get',
  'list',
  'page',
  'approve',
  'reject',
  'revokeScope',
  'countPending',
  'passkeyOptions',
] as const;
export const CHANGES_ADMIN = [
  'get',
  'list',
  'page',
  'approve',
  'reject',
  'countPending',
  'passkeyOptions',
] as const;
/**
 * Operators' passkeys: one's own enrolment (options, then the browser's answer with a current
 * factor), the list, removal (one's own, or an admin's of anyone's), sign-in options.
 */
export const PASSKEYS_ADMIN = [
  'registrationOptions',
  'enrolmentOptions',
  'register',
  'list',
  'remove',
  'loginOptions',
] as const satisfies readonly (keyof OperatorPasskeys)[];
/** Decisions signed with a passkey: their evidence, and its offline check. */
export const DECISIONS_ADMIN = [
  'evidence',
  'keys',
  'verify',
] as const satisfies readonly (keyof DecisionProofs)[];
export const SECOND_FACTOR_ADMIN = ['enroll', 'remove', 'enrolled', 'state', 'unlock'] as const;
export const CONFIG_ADMIN = ['apply', 'applyText'] as const;
export const PROVIDERS_ADMIN = [
  'register',
  'list',
  'show',
  'refresh',
  'classify',
  'classifyEntry',
] as const;
/** Every member of `SecretAdmin`: none returns a value. */
export const SECRETS_ADMIN = [
  'set',
  'rotate',
  'delete',
  'list',
] as const satisfies readonly (keyof SecretAdmin)[];
export const AUDIT_ADMIN = [
  'checkpoint',
  'latestCheckpoint',
  'inclusionProof',
  'consistencyProof',
  'verify',
  'exportBundle',
  'verifierKey',
  'origin',
] as const;
export const METRICS_ADMIN = ['render', 'requests'] as const;
/** Live destination sets: create, list, show, members, add, remove, refresh from the directory. */
export const DESTINATION_SETS_ADMIN = [
  'create',
  'list',
  'get',
  'members',
  'add',
  'remove',
  'refresh',
] as const satisfies readonly (keyof DestinationSets)[];
export const OPERATORS_ADMIN = [
  'create',
  'update',
  'get',
  'page',
  'setPassword',
  'loginLocal',
  'fromOidc',
  'issueToken',
  'revokeToken',
  'tokens',
  'authenticateToken',
  'confirm',
  // The operator authority: what a person may do, by action name (OPERATOR_ACTIONS), decided on
  // the account as read for the request. REST, the CLI and the console all ask it.
  'authority',
] as const satisfies readonly (keyof OperatorService)[];
export const REPORTS_ADMIN = ['names', 'build', 'render'] as const;
/** Owner teams' notification channels: add, list (URL origins only), remove. */
export const OWNER_CHANNELS_ADMIN = [
  'add',
  'list',
  'remove',
] as const satisfies readonly (keyof OwnerChannels)[];
/** The audit log's read side for people: search, one record. */
export const AUDIT_RECORDS_ADMIN = ['search', 'record'] as const;
/**
 * The classified store of raw arguments: an audited read, an audited search (by value or user),
 * erasure, the retention sweep, the keyed hash of a value and the retention period.
 */
export const CLASSIFIED_ADMIN = [
  'read',
  'search',
  'erase',
  'sweep',
  'tokenOf',
  'retentionDays',
] as const satisfies readonly (keyof ClassifiedArguments)[];
export const CONSOLE_SESSIONS_ADMIN = [
  'create',
  'lookup',
  'revoke',
  'beginLogin',
  'takeLogin',
  'sweep',
] as const;

export interface AdminApi {
  /** Which database this gateway runs on, and whether it answers (`/readyz`). */
  readonly health: {
    readonly dialect: Dialect;
    readonly location: string;
    ping(): Promise<void>;
  };
  /** Tool versions: register, list, show, lifecycle, quarantine, the lifecycle sweep. */
  readonly catalog: Pick<CatalogService, (typeof CATALOG_ADMIN)[number]>;
  /** Security reviews: the pending queue (the console's inbox) and a version's reviews. */
  readonly reviews: Pick<SecurityReviewDesk, (typeof REVIEWS_ADMIN)[number]>;
  /** Search over every offered tool, as agents would find them (admin view, not one session's). */
  readonly discovery: Pick<Discovery, (typeof DISCOVERY_ADMIN)[number]>;
  readonly agents: Pick<AgentService, (typeof AGENTS_ADMIN)[number]>;
  readonly keys: Pick<AgentKeys, (typeof KEYS_ADMIN)[number]>;
  readonly users: Pick<UserService, (typeof USERS_ADMIN)[number]>;
  /**
   * Admin view of sessions: one session's tools and what was withheld, and why; the live ones;
   * an operator's suspend and close (recorded with the operator).
   */
  readonly sessions: Pick<SessionService, (typeof SESSIONS_ADMIN)[number]>;
  /** Open runs (optionally of one agent) and an operator's revoke, recorded with the operator. */
  readonly runs: Pick<RunService, (typeof RUNS_ADMIN)[number]>;
  /** The approvals desk, decision side: list, show, approve, reject. */
  readonly approvals: Pick<ApprovalDesk, (typeof APPROVALS_ADMIN)[number]>;
  /** Four-eyes changes: privileged grants and irreversible tools waiting for approvers. */
  readonly changes: Pick<ChangeDesk, (typeof CHANGES_ADMIN)[number]>;
  /**
   * Operators' second factors: enrolment and removal (admins only, the secret shown once), whether
   * one is enrolled, attempts, backoff, lockout and the admin unlock. Never returns a stored secret.
   */
  readonly secondFactor: Pick<OperatorSecondFactors, (typeof SECOND_FACTOR_ADMIN)[number]>;
  /** Operators' passkeys (WebAuthn): enrolment, list, removal, sign-in options. */
  readonly passkeys: Pick<OperatorPasskeys, (typeof PASSKEYS_ADMIN)[number]>;
  /** Decisions signed with a passkey: the evidence and its offline check. */
  readonly decisions: Pick<DecisionProofs, (typeof DECISIONS_ADMIN)[number]>;
  /** `apply -f`: one code path for the CLI, REST and YAML files. */
  readonly config: Pick<ApplyService, (typeof CONFIG_ADMIN)[number]>;
  /**
   * Upstream MCP providers, administration only: register, list, show, refresh, classify a tool,
   * classify a resource, resource template or prompt (`classifyEntry`).
   */
  readonly providers: Pick<ProviderService, (typeof PROVIDERS_ADMIN)[number]>;
  /** The administrative event record. */
  readonly events: {
    list(filter: {
      subject?: string;
      afterSeq?: number;
      limit: number;
    }): ReturnType<typeof listEvents>;
  };
  /** Secrets, admin side only: set, rotate, delete, list; nothing here returns a value. */
  readonly secrets: SecretAdmin;
  /** The tamper-evident audit log: checkpoints, proofs, verification, export (read side). */
  readonly audit: Pick<AuditLog, (typeof AUDIT_ADMIN)[number]>;
  /**
   * Audit records found by agent, user, tool, kind, decision, rule and time; one record with
   * whether its hash recomputes. Argument values there are keyed hashes.
   */
  readonly auditRecords: Pick<AuditSearch, (typeof AUDIT_RECORDS_ADMIN)[number]>;
  /**
   * The classified store of calls' raw arguments (admins and auditors; every read and search is
   * an audit record naming the operator): read, search by value or user, erase, sweep.
   */
  readonly classified: Pick<ClassifiedArguments, (typeof CLASSIFIED_ADMIN)[number]>;
  /**
   * Live destination sets a tool's `destinations` rules name: admin-managed members, or a
   * directory tool's (refreshed by toolgate itself). Every change is an event and audit record.
   */
  readonly destinationSets: Pick<DestinationSets, (typeof DESTINATION_SETS_ADMIN)[number]>;
  /** Prometheus metrics of this gateway (its own registry); the HTTP front feeds `requests`. */
  readonly metrics: Pick<GatewayMetrics, (typeof METRICS_ADMIN)[number]>;
  /** Governance reports (capability register, access matrix, invocations, deprecation, orphans). */
  readonly reports: Pick<ReportService, (typeof REPORTS_ADMIN)[number]>;
  /** Owner teams' notification channels (webhooks); a channel's URL is never shown once stored. */
  readonly ownerChannels: Pick<OwnerChannels, (typeof OWNER_CHANNELS_ADMIN)[number]>;
  /**
   * Operator accounts: create and change (admins), local login and single sign-on, personal
   * tokens and their per-request check. Every change takes the authenticated operator.
   */
  readonly operators: Pick<OperatorService, (typeof OPERATORS_ADMIN)[number]>;
  /** The console's sessions and pending single sign-on logins, shared by every replica. */
  readonly consoleSessions: Pick<ConsoleSessions, (typeof CONSOLE_SESSIONS_ADMIN)[number]>;
  /**
   * Tool health (C14): each monitored version's state, score, breaker and last probe, probe
   * coverage, a probe on demand, and admins' overrides (audited, with a reason and an expiry).
   */
  readonly toolHealth: Pick<HealthMonitor, (typeof TOOL_HEALTH_ADMIN)[number]>;
  /** Which sandbox drivers this gateway's sandbox can use on this host. */
  doctor(): Promise<DriverReport[]>;
  /**
   * Housekeeping of a running gateway (serve runs it on a timer): expired rate and ceiling
   * counters and idempotency keys past their window are removed, and the approvals of revoked
   * runs still open are withdrawn; returns how many of each.
   */
  sweep: () => Promise<
    Awaited<ReturnType<Gate['sweep']>> & {
      /** Approvals of revoked runs marked `withdrawn` (a revoke's own withdrawal missed them). */
      withdrawnApprovals: number;
      /** Raw arguments older than the classified store's retention period, removed. */
      classifiedArguments: number;
    }
  >;
}
