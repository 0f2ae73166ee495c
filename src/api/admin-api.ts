/**
 * @module What an admin front (REST admin routes, the CLI) may use: the catalog, agents, keys,
 * users and grants, `apply -f`, the changes and approvals desks' decisions, second factors,
 * secrets (never their values), providers' administration, the audit log's proofs and
 * verification, reports, metrics and the host's sandbox doctor. No member is the store, the
 * sandbox, the credential broker or the gate: an admin front decides, it never runs a tool
 * (docs/architecture.md §6).
 */
import type { SecondFactorGuard } from '../approvals/index.js';
import type { AuditLog } from '../audit/index.js';
import type { CatalogService, Discovery } from '../catalog/index.js';
import type { ApplyService, ChangeDesk } from '../config/index.js';
import type { SecretAdmin } from '../credentials/index.js';
import type { ApprovalDesk, Gate, SessionService } from '../gate/index.js';
import type { AgentKeys, AgentService, UserService } from '../identity/index.js';
import type { GatewayMetrics } from '../metrics/index.js';
import type { ProviderService } from '../providers/index.js';
import type { ReportService } from '../reports/index.js';
import type { Dialect, listEvents } from '../store/index.js';
import type { DriverReport } from './host-admin.js';

export interface AdminApi {
  /** Which database this gateway runs on, and whether it answers (`/readyz`). */
  readonly health: {
    readonly dialect: Dialect;
    readonly location: string;
    ping(): Promise<void>;
  };
  /** Tool versions: register, list, show, lifecycle, quarantine, the lifecycle sweep. */
  readonly catalog: Pick<
    CatalogService,
    | 'register'
    | 'list'
    | 'versions'
    | 'get'
    | 'activate'
    | 'deprecate'
    | 'retire'
    | 'quarantine'
    | 'release'
    | 'sweepLifecycle'
  >;
  /** Search over every offered tool, as agents would find them (admin view, not one session's). */
  readonly discovery: Pick<Discovery, 'search'>;
  readonly agents: Pick<AgentService, 'list' | 'get' | 'grants' | 'revoke'>;
  readonly keys: Pick<AgentKeys, 'issue' | 'revoke' | 'list'>;
  readonly users: Pick<UserService, 'get' | 'list'>;
  /** Admin view of a session: its tools and what was withheld, and why. */
  readonly sessions: Pick<SessionService, 'inspect'>;
  /** The approvals desk, decision side: list, show, approve, reject. */
  readonly approvals: Pick<ApprovalDesk, 'get' | 'list' | 'page' | 'approve' | 'reject'>;
  /** Four-eyes changes: privileged grants and irreversible tools waiting for approvers. */
  readonly changes: Pick<ChangeDesk, 'get' | 'list' | 'page' | 'approve' | 'reject'>;
  /** Approvers' second-factor attempts: backoff, lockout, and the admin unlock. */
  readonly secondFactor: Pick<SecondFactorGuard, 'state' | 'unlock'>;
  /** `apply -f`: one code path for the CLI, REST and YAML files. */
  readonly config: Pick<ApplyService, 'apply' | 'applyText'>;
  /** Upstream MCP providers, administration only: register, list, show, refresh, classify. */
  readonly providers: Pick<ProviderService, 'register' | 'list' | 'show' | 'refresh' | 'classify'>;
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
  >;
  /** Prometheus metrics of this gateway (its own registry). */
  readonly metrics: Pick<GatewayMetrics, 'render'>;
  /** Governance reports (capability register, access matrix, invocations, deprecation, orphans). */
  readonly reports: Pick<ReportService, 'names' | 'render'>;
  /** Which sandbox drivers this gateway's sandbox can use on this host. */
  doctor(): Promise<DriverReport[]>;
  /**
   * Housekeeping of a running gateway (serve runs it on a timer): expired rate and ceiling
   * counters and idempotency keys past their window are removed; returns how many of each.
   */
  sweep: Gate['sweep'];
}
