/**
 * @module The composition root: opens the store and wires the services. `openToolgate` hands a
 * front only its API (`agent`, `admin`, `security`); `openGateway` returns the whole wiring, for
 * this repository's tests and benchmarks, and is not exported from the package
 * (docs/architecture.md §6).
 */
import { randomBytes } from 'node:crypto';
import {
  type AdminApi,
  AGENTS_ADMIN,
  type AgentApi,
  type AgentApprovalStatus,
  type AgentCallOutcome,
  APPROVALS_ADMIN,
  AUDIT_ADMIN,
  AUDIT_RECORDS_ADMIN,
  CATALOG_ADMIN,
  CHANGES_ADMIN,
  CLASSIFIED_ADMIN,
  CONFIG_ADMIN,
  CONSOLE_SESSIONS_ADMIN,
  DESTINATION_SETS_ADMIN,
  DISCOVERY_ADMIN,
  DISCOVERY_AGENT,
  ENTRIES_AGENT,
  expose,
  KEYS_ADMIN,
  METRICS_ADMIN,
  OPERATORS_ADMIN,
  OWNER_CHANNELS_ADMIN,
  PROVIDERS_ADMIN,
  REPORTS_ADMIN,
  REVIEWS_ADMIN,
  RUNS_ADMIN,
  RUNS_AGENT,
  SECOND_FACTOR_ADMIN,
  SECRETS_ADMIN,
  SESSIONS_ADMIN,
  SESSIONS_AGENT,
  type SecurityEvents,
  TOOL_HEALTH_ADMIN,
  USERS_ADMIN,
} from '../api/index.js';
import {
  type AgentPrincipal,
  type Clock,
  problem,
  systemClock,
  ToolgateError,
} from '../core/index.js';
import {
  CatalogService,
  DISCOVER_TOOLS_HANDLER,
  Discovery,
  type HealthReader,
  parseToolRef,
  ScopedDiscovery,
  SecurityReviewDesk,
} from '../domain/catalog/index.js';
import {
  CredentialBroker,
  configuredMasterKey,
  type MasterKey,
  readClientSecretFile,
  type SecretAdmin,
  SecretsService,
  SubjectTokens,
  TokenExchanger,
} from '../domain/credentials/index.js';
import {
  ApprovalDesk,
  ApprovalSigner,
  OperatorSecondFactors,
  REQUEST_STATE_KEY_LABEL,
  RequestStateSealer,
  SecondFactorGuard,
} from '../domain/decisions/index.js';
import { IdempotencyStore, keyOutcome } from '../domain/idempotency/index.js';
import {
  AccessTokenVerifier,
  AgentAuthenticator,
  AgentKeys,
  AgentService,
  exchangeIssuer,
  type JwtConfig,
  JwtVerifier,
  type OAuthResourceServerConfig,
  protectedResourceMetadata,
  protectedResourceMetadataUrl,
  UserService,
} from '../domain/identity/index.js';
import { CallCounters } from '../domain/limits/index.js';
import {
  ConsoleSessions,
  OperatorService,
  type OperatorServiceOptions,
  type SecondFactorCheck,
} from '../domain/operators/index.js';
import {
  type OidcConfig,
  OidcLogin,
  type OidcLoginOptions,
} from '../domain/operators/oidc/index.js';
import { DestinationSets, type PolicyEngine, PolicyService } from '../domain/policy/index.js';
import {
  type AgentCaps,
  AgentDiscovery,
  DEFAULT_AGENT_CAPS,
  GovernedUris,
  RunService,
  SessionEntries,
  SessionService,
  withdrawEndedRunApprovals,
} from '../domain/sessions/index.js';
import {
  type CheckedFetchOptions,
  ProviderService,
  UpstreamPool,
} from '../execution/providers/index.js';
import {
  CommandRuntime,
  demoExecutor,
  HttpRuntime,
  HttpToolRunner,
  InlineExecutor,
  InlineRuntime,
  McpRuntime,
  runtimeRegistry,
} from '../execution/runtimes/index.js';
import {
  definitionPathProblems,
  EgressProxy,
  OutboundGuard,
  type OutboundOptions,
  SandboxService,
} from '../execution/sandbox/index.js';
import { type AfterInjection, Gate, resolveAfterInjection } from '../gate/index.js';
import { ApplyService, ChangeDesk } from '../operations/config/index.js';
import {
  DetectorEngine,
  type DetectorsConfigInput,
  resolveDetectorsConfig,
} from '../operations/detectors/index.js';
import {
  type HealthConfigInput,
  HealthMonitor,
  resolveHealthConfig,
  ToolProber,
} from '../operations/health/index.js';
import { GatewayMetrics } from '../operations/metrics/index.js';
import {
  type DeliveryOutcome,
  type NotificationKind,
  Notifier,
  type NotifyConfigInput,
  resolveNotifyConfig,
} from '../operations/notify/index.js';
import {
  OwnerChannels,
  OwnerNotices,
  type OwnerNoticesOptions,
} from '../operations/owners/index.js';
import { ReportService } from '../operations/reports/index.js';
import {
  AuditLog,
  AuditPseudonyms,
  AuditSearch,
  ClassifiedArguments,
  DEFAULT_ORIGIN,
  declaredPropertyNames,
  generateNoteSigner,
  type NoteSigner,
  PSEUDONYM_KEY_LABEL,
} from '../records/audit/index.js';
import {
  DEFAULT_DB_URL,
  listEvents,
  openStore,
  readRevisions,
  type Store,
} from '../records/store/index.js';
import { securityEvents } from './security-events.js';

/**
 * What a front is given: the agent API (REST agent routes, MCP), the admin API (REST admin
 * routes, the CLI) and the security-event sink (MCP's refusals). Nothing here is the store, the
 * sandbox, the credential broker or the gate itself.
 */
export interface Toolgate {
  readonly agent: AgentApi;
  readonly admin: AdminApi;
  readonly security: SecurityEvents;
  /** Flushes the audit log and closes everything the gateway opened. */
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
  /** Operator accounts, local login, single sign-on upserts, personal tokens. */
  readonly operators: OperatorService;
  /** The health monitor (C14): probes, scores, breakers, overrides, coverage; `on` for events. */
  readonly health: HealthMonitor;
}

export interface ToolgateOptions {
  /** `sqlite:PATH` (default `sqlite:./data/toolgate.db`) or `postgres://…`. */
  readonly db?: string;
  readonly clock?: Clock;
  /** Signs approval tokens; keep it across restarts (serve keeps it in the data folder). */
  readonly approvalSigner?: ApprovalSigner | (() => ApprovalSigner);
  /** In-process handlers for `inline` tools; default: the demo catalog's. */
  readonly executor?: InlineExecutor;
  /**
   * Where agents' discovery reads tool health for its ranking and marks (C5, C14); default: this
   * gateway's health monitor. Another source (a fleet-wide health service) may stand in for it.
   */
  readonly discoveryHealth?: HealthReader;
  /** Accept JWT bearer tokens for agents, verified against this configuration. */
  readonly jwt?: JwtConfig;
  /**
   * The rules of outbound requests to URLs people configure (owner channels, reviewer and alert
   * webhooks, JWKS and token-exchange endpoints; `openOidcLogin` takes the same): the tool-egress
   * rules. `allowLoopback` is the admin's gateway-wide permission for
   * loopback receivers (`TOOLGATE_OUTBOUND_ALLOW_LOOPBACK=1` for serve); default false. `resolver` for tests.
   */
  readonly outbound?: OutboundOptions;
  /**
   * Be an OAuth 2.1 resource server (MCP authorization): accept access tokens of these
   * authorization servers, minted for this resource, mapped to agents, users and capabilities.
   */
  readonly oauth?: OAuthResourceServerConfig;
  /** A fixed policy engine instead of the stored policies (library use). */
  readonly policy?: PolicyEngine;
  /**
   * Seals the secrets store; loaded on first use. Default: TOOLGATE_MASTER_KEY or
   * TOOLGATE_MASTER_KEY_FILE (the CLI and serve also fall back to `<data dir>/master.key`). It
   * also seals operators' second-factor secrets.
   */
  readonly masterKey?: MasterKey | (() => MasterKey);
  /** Which environment's secrets calls use; default `default`. */
  readonly environment?: string;
  /** Sandbox drivers for `command` tools; default: process, namespace and gvisor on this host. */
  readonly sandbox?: SandboxService;
  /**
   * Host paths no sandbox may see: the data folder (keys, tokens, master key) and any file kept
   * outside it. Argv files, path roots and provider binds or workspaces inside one (or holding
   * one) are refused at registration and never run. The SQLite database's files are always added.
   */
  readonly protectedPaths?: readonly string[];
  /**
   * The egress proxy and http runtime; default: a proxy with lease sockets in a fresh private
   * folder and the system resolver. Tests pass their own (with a test CA or test targets).
   */
  readonly egress?: { readonly proxy: EgressProxy; readonly http: HttpToolRunner };
  /** Signs audit checkpoints (serve keeps it in the data folder); a throwaway key when absent. */
  readonly auditSigner?: NoteSigner | (() => NoteSigner);
  /** Checkpoint policy; `checkpoints: false` for read-only commands (verify, export of old data). */
  readonly audit?: {
    readonly checkpoints?: boolean;
    readonly checkpointEvery?: number;
    readonly checkpointIntervalMs?: number;
    readonly origin?: string;
    readonly onError?: (err: unknown) => void;
    /**
     * Days the classified store keeps a call's raw arguments (default 30); the sweep removes
     * older ones (docs/security-model.md, "Personal data and the audit log").
     */
    readonly classifiedRetentionDays?: number;
  };
  /** Detector thresholds, webhook and suspension (defaults: all on, none suspends); false: off. */
  readonly detectors?: DetectorsConfigInput | false;
  /** Notification webhooks and the console's public URL their links use; none by default. */
  readonly notify?: NotifyConfigInput;
  /** Teams that own tools, for the orphaned-tools report (agent owners and users count too). */
  readonly teams?: readonly string[];
  /**
   * Owner notices: the scheduled check's period (default 0: no timer; `serve` sets one), the
   * dedupe window, the per-team cap, the retire lead time, the orphans' fallback team and the
   * error-rate window.
   */
  readonly owners?: Partial<OwnerNoticesOptions>;
  /** Per-agent caps on open sessions and pending approvals (defaults: 64 and 50). */
  readonly caps?: Partial<AgentCaps>;
  /**
   * What waits for a reviewer once instruction-like text entered a session through an untrusted
   * result (rule `provenance.injection_seen`, docs/architecture.md §3 step `approval`): calls of these
   * action classes and reads of these data-access levels. Default: every state-changing class,
   * no reads; `{ action_classes: [] }` switches the rule off.
   */
  readonly afterInjection?: Partial<AfterInjection>;
  /**
   * Operators: the second factor local logins check (none: no local login succeeds), and the
   * login rate limit and scrypt cost (tests lower them).
   */
  readonly operators?: {
    readonly secondFactor?: SecondFactorCheck;
    readonly loginLimits?: NonNullable<OperatorServiceOptions['loginLimits']>;
    readonly scrypt?: NonNullable<OperatorServiceOptions['scrypt']>;
  };
  /**
   * The health monitor (C14): probe intervals by tier, breaker, thresholds, scheduler bounds
   * (defaults in src/operations/health/health-config.ts); `false` starts no probes (state comes from live
   * calls only).
   */
  readonly health?: HealthConfigInput | false;
  /** Upstream MCP processes: how many may live at once (default 64). */
  readonly providers?: {
    readonly maxLive?: number;
    readonly onError?: (err: unknown) => void;
    /** Egress rules for HTTP providers; tests pass a resolver, test targets and a test CA. */
    readonly http?: CheckedFetchOptions;
  };
}

/** Caps must be positive integers: a zero or fractional cap is a configuration mistake. */
function resolveAgentCaps(input: Partial<AgentCaps> = {}): AgentCaps {
  const caps = { ...DEFAULT_AGENT_CAPS, ...input };
  for (const [name, value] of Object.entries(caps)) {
    if (!Number.isInteger(value) || value < 1) {
      throw new ToolgateError('INPUT_INVALID', `caps.${name} must be a positive integer`, {
        problems: [problem(`/caps/${name}`, 'must be a positive integer', 'range')],
      });
    }
  }
  return caps;
}

/**
 * Checks configured outbound URLs (shape, then every resolved address) under the outbound rules,
 * at start;
 * throws INPUT_INVALID listing each refused one at its configuration key, with the egress rule.
 */
async function refuseOutboundProblems(
  outbound: OutboundGuard,
  urls: readonly { readonly at: string; readonly url: string }[],
): Promise<void> {
  const found = await Promise.all(
    urls.map(async ({ at, url }) => {
      const p = await outbound.problem(url);
      // A name that does not resolve at start is not fatal: each request resolves and checks
      // again, and is refused then if it still points nowhere allowed.
      return p && p.rule !== 'egress.dns'
        ? problem(at, `${at.slice(1)} ${p.message}`, p.rule)
        : null;
    }),
  );
  const problems = found.filter((p) => p !== null);
  if (problems.length > 0) {
    throw new ToolgateError(
      'INPUT_INVALID',
      `a configured outbound URL is refused: ${problems.map((p) => p.message).join('; ')}`,
      { problems },
    );
  }
}

/**
 * The OpenID Connect relying party under the outbound rules (`outbound` as for `openToolgate`):
 * its issuer is checked now, resolved (INPUT_INVALID at `/issuer` with the egress rule), and every
 * request to the provider — discovery, token, JWKS, the endpoints discovery names — again when made.
 */
export async function openOidcLogin(
  config: OidcConfig,
  outbound: OutboundOptions = {},
  options: Omit<OidcLoginOptions, 'outbound'> = {},
): Promise<OidcLogin> {
  const guard = new OutboundGuard(outbound);
  await refuseOutboundProblems(guard, [{ at: '/issuer', url: config.issuer }]);
  return new OidcLogin(config, { ...options, outbound: guard });
}

/** Opens a gateway and hands back only what fronts may use. */
export async function openToolgate(options: ToolgateOptions = {}): Promise<Toolgate> {
  const { agent, admin, security, close } = await openGateway(options);
  return { agent, admin, security, close };
}

/** Opens a gateway with its whole wiring (tests, benchmarks); fronts use `openToolgate`. */
export async function openGateway(options: ToolgateOptions = {}): Promise<Gateway> {
  // Configuration is checked before anything is opened: a bad one leaves nothing behind.
  const detectorsConfig =
    options.detectors === false ? null : resolveDetectorsConfig(options.detectors ?? {});
  const caps = resolveAgentCaps(options.caps);
  const afterInjection = resolveAfterInjection(options.afterInjection);
  const notifyConfig = resolveNotifyConfig(options.notify ?? {});
  const healthConfig = resolveHealthConfig(options.health === false ? {} : (options.health ?? {}));
  // Outcomes are counted once the metrics exist (they are made below, before any call runs).
  let countNotification: (kind: NotificationKind, outcome: DeliveryOutcome) => void = () => {};
  const outbound = new OutboundGuard(options.outbound ?? {});
  // The URLs fetched or sent to that this configuration names go under the outbound rules now,
  // resolved: one that points somewhere they refuse stops the start with nothing opened.
  await refuseOutboundProblems(outbound, [
    ...notifyConfig.webhookUrls.map((url, i) => ({ at: `/notify/webhookUrls/${i}`, url })),
    ...(detectorsConfig?.webhook.url
      ? [{ at: '/detectors/webhook/url', url: detectorsConfig.webhook.url }]
      : []),
    ...(options.jwt?.jwksUrl ? [{ at: '/jwt/jwksUrl', url: options.jwt.jwksUrl }] : []),
    ...(options.oauth?.issuers ?? []).flatMap((issuer, i) =>
      issuer.jwksUrl ? [{ at: `/oauth/issuers/${i}/jwksUrl`, url: issuer.jwksUrl }] : [],
    ),
    ...(options.oauth?.tokenExchange
      ? [
          {
            at: '/oauth/tokenExchange/tokenEndpoint',
            url: options.oauth.tokenExchange.tokenEndpoint,
          },
        ]
      : []),
  ]);
  const notifier = new Notifier(notifyConfig, outbound, (kind, outcome) =>
    countNotification(kind, outcome),
  );
  const store = await openStore(options.db ?? DEFAULT_DB_URL);
  const clock = options.clock ? { clock: options.clock } : {};
  // The sandbox is made below; the catalog asks it only when a definition is registered.
  const catalog = new CatalogService(store, {
    ...clock,
    hostChecks: (definition) => definitionPathProblems(sandbox.protectedPaths, definition),
    // Made below: a reviewer's step-up checks the same sealed second factors as approvals.
    secondFactors: { check: (id, code, rule) => secondFactor.check(id, code, rule) },
  });
  const agents = new AgentService(store, clock);
  const users = new UserService(store.db, options.clock);
  const sessions = new SessionService(
    store,
    catalog,
    agents,
    users,
    options.clock,
    caps.maxSessionsPerAgent,
  );
  const runs = new RunService(store, sessions, options.clock);
  // One master key, loaded once on first use, seals both tool secrets and second factors.
  let masterKey: MasterKey | null = null;
  const loadMasterKey = (): MasterKey => {
    const source = options.masterKey ?? (() => configuredMasterKey());
    masterKey ??= typeof source === 'function' ? source() : source;
    return masterKey;
  };
  // Operators' second factors live in the store, sealed; one attempt counter per operator for
  // every check (and, through the store, every replica).
  const secondFactor: OperatorSecondFactors = new OperatorSecondFactors(store.db, loadMasterKey, {
    ...clock,
    guard: new SecondFactorGuard(store.db, clock),
    // A second factor is enrolled for an operator account, never for a name nobody holds.
    operatorExists: (id): Promise<boolean> =>
      operators.get(id).then(
        () => true,
        () => false,
      ),
  });
  const approvals = new ApprovalDesk(
    store.db,
    options.approvalSigner ?? ApprovalSigner.generate(),
    {
      ...clock,
      secondFactors: secondFactor,
      maxPendingPerAgent: caps.maxPendingApprovalsPerAgent,
      ...(notifier.enabled ? { onPending: (view) => notifier.approvalPending(view) } : {}),
    },
  );
  // Local logins check the same sealed second factors as approvals (one code, one use).
  const operators: OperatorService = new OperatorService(store.db, {
    ...clock,
    secondFactor,
    ...options.operators,
  });
  const policies = new PolicyService(store.db, options.clock);
  const destinationSets = new DestinationSets(store.db, options.clock);
  const sandbox = options.sandbox ?? new SandboxService();
  // No sandbox may see the gateway's own files: the data folder and token files the caller names,
  // and the SQLite database with its -wal, -shm and -journal files.
  sandbox.protectedPaths.add([...(options.protectedPaths ?? []), ...store.files]);
  const secrets = new SecretsService(store.db, loadMasterKey, options.clock);
  // Held only when OAuth is configured: the callers' access tokens, for token exchange.
  const subjects = options.oauth ? new SubjectTokens() : null;
  const exchange = options.oauth?.tokenExchange;
  const credentials = new CredentialBroker(secrets, {
    ...clock,
    ...(options.environment ? { environment: options.environment } : {}),
    ...(exchange && subjects
      ? {
          exchange: {
            subjects,
            exchanger: new TokenExchanger(
              {
                issuer: exchangeIssuer(options.oauth),
                tokenEndpoint: exchange.tokenEndpoint,
                clientId: exchange.clientId,
                clientSecret: readClientSecretFile(exchange.clientSecretFile),
                tools: exchange.tools,
              },
              { fetch: outbound.fetch },
            ),
          },
        }
      : {}),
  });
  const egress = options.egress ?? { proxy: new EgressProxy(), http: new HttpToolRunner() };
  const origin = options.audit?.origin ?? DEFAULT_ORIGIN;
  // The key of the log's keyed hashes is derived from the master key (never stored); without a
  // configured master key (library use) it is this process's own, so hashes match within it only.
  // A configured key that cannot be read fails the record, never writes it unmasked.
  const pseudonyms = new AuditPseudonyms(() => {
    try {
      return loadMasterKey().derive(PSEUDONYM_KEY_LABEL);
    } catch (err) {
      const notConfigured =
        options.masterKey === undefined &&
        err instanceof ToolgateError &&
        (err.details as { reason?: unknown }).reason === 'not_configured';
      if (notConfigured) return randomBytes(32);
      throw err;
    }
  });
  const classified = new ClassifiedArguments(store, pseudonyms, {
    ...clock,
    // The keys the log kept readable: those a version of the tool declares (audit-pseudonyms.ts).
    declaredKeys: async (toolId) => {
      const names = new Set<string>();
      for (const v of await catalog.versions(toolId)) {
        for (const n of declaredPropertyNames(v.definition.input_schema)) names.add(n);
      }
      return names;
    },
    ...(options.audit?.classifiedRetentionDays !== undefined
      ? { retentionDays: options.audit.classifiedRetentionDays }
      : {}),
  });
  const audit = new AuditLog(store, {
    pseudonyms,
    signer: options.auditSigner ?? (() => generateNoteSigner(origin).signer),
    origin,
    ...(options.audit?.checkpoints !== undefined ? { checkpoints: options.audit.checkpoints } : {}),
    ...(options.audit?.checkpointEvery !== undefined
      ? { checkpointEvery: options.audit.checkpointEvery }
      : {}),
    ...(options.audit?.checkpointIntervalMs !== undefined
      ? { checkpointIntervalMs: options.audit.checkpointIntervalMs }
      : {}),
    ...(options.audit?.onError ? { onError: options.audit.onError } : {}),
    ...clock,
  });
  // Upstream MCP processes per gate session: administration (refresh, a changed spec) closes them
  // by provider, the mcp runtime calls through them and closes them with their session.
  const upstreams = new UpstreamPool({
    ...(options.providers?.maxLive !== undefined ? { maxLive: options.providers.maxLive } : {}),
    ...(options.providers?.onError ? { onError: options.providers.onError } : {}),
  });
  const providers = new ProviderService(store, catalog, sandbox, upstreams, {
    ...clock,
    ...(options.providers?.onError ? { onError: options.providers.onError } : {}),
    ...(options.providers?.http ? { http: options.providers.http } : {}),
  });
  const mcp = new McpRuntime(providers, upstreams);
  sessions.onClose((sessionId) => void mcp.closeSession(sessionId));
  // Agent discovery searches only the caller's permitted set (docs/architecture.md §6); the
  // built-in discovery tool runs it for the session the gate admitted the call in.
  const agentDiscovery = new AgentDiscovery(
    store,
    catalog,
    agents,
    sessions,
    // Ranked by the health monitor's state and score (C14); `health` is made below, and read
    // only when an agent searches, after the gateway is open.
    new ScopedDiscovery(
      catalog,
      options.discoveryHealth ?? { healthOf: (id, version) => health.healthOf(id, version) },
    ),
  );
  const builtins = new InlineExecutor().register(DISCOVER_TOOLS_HANDLER, (args, call) =>
    agentDiscovery.forGatedCall(call.sessionId, args),
  );
  // One runtime per kind (docs/architecture.md §4). Command tools never run unsandboxed, and
  // reach the network only through the proxy.
  const runtimes = runtimeRegistry(
    new InlineRuntime(options.executor ?? demoExecutor(), builtins),
    new CommandRuntime(sandbox, egress.proxy),
    new HttpRuntime(egress.http),
    mcp,
  );
  // Observability: metrics and detectors consume committed audit records, off the call path.
  const metrics = new GatewayMetrics({
    approvalStates: () => approvals.statusCounts(),
  });
  // The health monitor probes through the same runtimes (and so sandbox and egress rules) the
  // gate runs calls through, with each tool's own credential (docs/architecture.md §8, C14).
  const health = new HealthMonitor({
    store,
    catalog,
    prober: new ToolProber({ runtimes, credentials, http: egress.http, providers }),
    config: healthConfig,
    registry: metrics.registry,
    ...clock,
    ...(options.providers?.onError ? { onError: options.providers.onError } : {}),
  });
  sessions.setHealth(health);
  const governedUris = new GovernedUris(store);
  const idempotency = new IdempotencyStore(store.db, options.clock);
  const gate = new Gate({
    health,
    governedUris,
    audit: audit.writer,
    counters: new CallCounters(store),
    idempotency,
    revisions: () => readRevisions(store.db),
    catalog,
    agents,
    users,
    sessions,
    approvals,
    runtimes,
    credentials,
    policies: options.policy ? async () => options.policy ?? null : () => policies.engine(),
    afterInjection,
    destinationSets,
    ...(options.oauth ? { oauth: options.oauth } : {}),
    // A step-up asked before any session was named is an event of the principal (scope step).
    principalEvents: (action, subject, details) => security.record(action, subject, details),
    ...clock,
  });
  // Directory sets are read by toolgate itself, through the gate's runtimes (never an agent's).
  destinationSets.useDirectory(gate.directoryReader());
  audit.writer.onCommitted((batch, commitMs) => metrics.observeCommitted(batch, commitMs));
  countNotification = (kind, outcome) => metrics.notification(kind, outcome);
  if (notifier.enabled) catalog.onQuarantine((q) => notifier.toolQuarantined(q));
  const detectors =
    detectorsConfig === null
      ? null
      : new DetectorEngine({
          store,
          catalog,
          agents,
          sessions,
          audit: audit.writer,
          config: detectorsConfig,
          outbound,
          sink: metrics,
          ...(notifier.enabled
            ? {
                onAlert: (alert, id, suspended) =>
                  notifier.alertRaised({ ...alert, id, suspended }),
              }
            : {}),
          ...clock,
        });
  await detectors?.start();
  if (options.health === false) await health.sync();
  else await health.start();
  const changes = new ChangeDesk(store.db, catalog, agents, {
    ...clock,
    secondFactors: secondFactor,
  });
  catalog.setChangeRequester(async (trx, tool, required, actor) => {
    const reason = `registered ${tool.toolId}@${tool.version}`;
    return (await changes.requestIn(trx, { kind: 'tool', ...tool }, required, reason, actor)).id;
  });
  const config = new ApplyService(catalog, agents, users, policies, changes, providers);
  const keys = new AgentKeys(store.db, options.clock);
  const jwt = options.jwt ? new JwtVerifier(options.jwt, outbound.fetch) : null;
  const oauth = options.oauth ? new AccessTokenVerifier(options.oauth, outbound.fetch) : null;
  const authenticator = new AgentAuthenticator({
    agents,
    users,
    keys,
    jwt,
    oauth,
    subjects,
    refusals: {
      record: (action, subject, details) => security.record(action, subject, details),
      sampled: (action, subject, details, key) => security.sampled(action, subject, details, key),
    },
  });
  const oauthFront: AgentApi['oauth'] = oauth
    ? Object.freeze({
        metadata: protectedResourceMetadata(oauth.config),
        metadataUrl: protectedResourceMetadataUrl(oauth.config.resource),
      })
    : null;
  const discovery = new Discovery(catalog);
  const reviews = new SecurityReviewDesk(store.db);
  const events = {
    list: (filter: Parameters<AdminApi['events']['list']>[0]) => listEvents(store.db, filter),
  };
  const revisions = () => readRevisions(store.db);
  const reports = new ReportService(
    {
      db: store.db,
      catalog,
      agents,
      users,
      teams: options.teams ?? [],
      health: (id, version) => health.healthOf(id, version).state,
    },
    options.clock,
  );
  const ownerChannels = new OwnerChannels(store.db, outbound, options.clock);
  const ownerNotices = new OwnerNotices({
    db: store.db,
    channels: ownerChannels,
    ownerOf: (id, version) =>
      catalog.get(id, version).then(
        (t) => t.owner,
        () => null,
      ),
    deprecated: async () =>
      (await catalog.list({ lifecycle: 'deprecated' })).map((t) => ({
        id: t.id,
        version: t.version,
        owner: t.owner,
        retire_at: t.retire_at,
      })),
    orphans: async () =>
      (await reports.build({ name: 'orphaned-tools' })).rows.map((r) => ({
        tool: String(r.tool),
        version: String(r.version),
        owner: String(r.owner),
        reason: String(r.reason),
      })),
    delivery: notifyConfig,
    outbound,
    sink: metrics,
    ...clock,
    ...(options.owners ? { options: options.owners } : {}),
  });
  // Error rates come from the call outcomes already committed: no query per call.
  audit.writer.onCommitted((batch) => ownerNotices.observe(batch));
  await ownerNotices.init();
  ownerNotices.start();
  // A tool that turns degraded or unavailable is the owner's news (C14, C16; bounded and
  // deduplicated by the notices themselves).
  health.on((e) => {
    if (e.kind !== 'health_changed' || (e.to !== 'degraded' && e.to !== 'unavailable')) return;
    void ownerNotices.toolEvent({
      kind: 'unhealthy',
      tool_id: e.toolId,
      version: e.version,
      owner: e.owner,
      facts: { from: e.from, to: e.to, score: e.score, cause: e.cause, rule: e.rule },
    });
  });
  const security = securityEvents(store, pseudonyms, options.clock ?? systemClock);
  // Each API holds only the members it names, bound once here (not per call): what a front is
  // not given (a provider's `call`, the audit `writer`, a session's `suspend`) is not reachable.
  const agent: AgentApi = Object.freeze({
    authenticate: (token: string, peer?: string) => authenticator.authenticate(token, peer),
    oauth: oauthFront,
    sessions: expose(sessions, SESSIONS_AGENT),
    runs: expose(runs, RUNS_AGENT),
    entries: expose(new SessionEntries(sessions, catalog, governedUris), ENTRIES_AGENT),
    discovery: expose(agentDiscovery, DISCOVERY_AGENT),
    invoke: gate.invoke.bind(gate),
    stepUp: async (
      ...[call, toolRef, args, via]: Parameters<AgentApi['stepUp']>
    ): ReturnType<AgentApi['stepUp']> => {
      const refused = await gate.stepUp(call, toolRef, args, via);
      return refused === null
        ? null
        : new ToolgateError('INSUFFICIENT_SCOPE', refused.message, {
            scope: (refused.details as { scope: string }).scope,
          });
    },
    requestStates: expose(
      new RequestStateSealer(
        () => loadMasterKey().derive(REQUEST_STATE_KEY_LABEL),
        options.clock ? { clock: options.clock } : {},
      ),
      ['seal', 'open'],
    ),
    revisions,
    approvalStatus: async (
      sessionId: string,
      who: AgentPrincipal,
      approvalId: string,
    ): Promise<AgentApprovalStatus> => {
      await sessions.require(sessionId, who);
      const view = await approvals.get(approvalId).catch(() => null);
      // Another session's approval is not found, whoever's it is: nothing says it exists.
      if (view === null || view.session_id !== sessionId || view.agent_id !== who.agentId)
        throw new ToolgateError('NOT_FOUND', `no approval ${approvalId} in this session`, {});
      return {
        approval_id: view.id,
        status: view.status,
        tool: view.tool_id,
        version: view.tool_version,
        expires_at: view.expires_at,
        decided_at: view.decided_at,
        reason: view.status === 'rejected' || view.status === 'withdrawn' ? view.reason : null,
      };
    },
    callOutcome: async (
      sessionId: string,
      who: AgentPrincipal,
      tool: string,
      key: string,
    ): Promise<AgentCallOutcome> => {
      const session = await sessions.require(sessionId, who);
      // `name@1` names the same tool as `name`: a key is scoped to the tool, not its major.
      const ref = parseToolRef(tool);
      const tools = JSON.parse(session.tool_set) as { id: string; name: string }[];
      return keyOutcome(
        idempotency,
        { agentId: who.agentId, userId: session.user_id, tools },
        ref?.name ?? tool,
        key,
      );
    },
  });
  const consoleSessions = new ConsoleSessions(store.db, options.clock);
  const admin: AdminApi = Object.freeze({
    health: Object.freeze({
      dialect: store.dialect,
      location: store.location,
      ping: () => store.ping(),
    }),
    catalog: expose(catalog, CATALOG_ADMIN),
    reviews: expose(reviews, REVIEWS_ADMIN),
    discovery: expose(discovery, DISCOVERY_ADMIN),
    agents: expose(agents, AGENTS_ADMIN),
    keys: expose(keys, KEYS_ADMIN),
    users: expose(users, USERS_ADMIN),
    sessions: expose(sessions, SESSIONS_ADMIN),
    runs: expose(runs, RUNS_ADMIN),
    approvals: expose(approvals, APPROVALS_ADMIN),
    changes: expose(changes, CHANGES_ADMIN),
    secondFactor: expose(secondFactor, SECOND_FACTOR_ADMIN),
    config: expose(config, CONFIG_ADMIN),
    providers: expose(providers, PROVIDERS_ADMIN),
    events,
    secrets: expose(secrets, SECRETS_ADMIN),
    audit: expose(audit, AUDIT_ADMIN),
    auditRecords: expose(new AuditSearch(store), AUDIT_RECORDS_ADMIN),
    classified: expose(classified, CLASSIFIED_ADMIN),
    metrics: expose(metrics, METRICS_ADMIN),
    destinationSets: expose(destinationSets, DESTINATION_SETS_ADMIN),
    reports: expose(reports, REPORTS_ADMIN),
    ownerChannels: expose(ownerChannels, OWNER_CHANNELS_ADMIN),
    operators: expose(operators, OPERATORS_ADMIN),
    consoleSessions: expose(consoleSessions, CONSOLE_SESSIONS_ADMIN),
    toolHealth: expose(health, TOOL_HEALTH_ADMIN),
    doctor: () => sandbox.doctor(),
    sweep: async () => ({
      ...(await gate.sweep()),
      classifiedArguments: await classified.sweep(),
      withdrawnApprovals: await withdrawEndedRunApprovals(
        store.db,
        (options.clock ?? systemClock)(),
      ),
    }),
  });
  return {
    agent,
    admin,
    security,
    store,
    catalog,
    reviews,
    discovery,
    agents,
    keys,
    authenticate: agent.authenticate,
    users,
    sessions,
    approvals,
    gate,
    changes,
    secondFactor,
    config,
    sandbox,
    providers,
    events,
    revisions,
    secrets,
    credentials,
    audit,
    metrics,
    destinationSets,
    detectors,
    notifier,
    reports,
    ownerChannels,
    ownerNotices,
    operators,
    health,
    close: async () => {
      await health.stop();
      await upstreams.close();
      await gate.flush();
      // Alerts raised by what was just flushed are written before the log closes.
      await detectors?.idle();
      await gate.flush();
      await notifier.close();
      await ownerNotices.close();
      await security.close();
      await audit.close();
      if (!options.egress) await egress.proxy.close();
      await store.close();
    },
  };
}
