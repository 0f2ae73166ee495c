/** @module `toolgate serve`: opens the store, loads the demo catalog if asked, serves REST on loopback. */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { narrowPrivateDir, ToolgateError } from '../../core/index.js';
import { loadMasterKey } from '../../domain/credentials/index.js';
import { loadOrCreateAdminToken } from '../../domain/identity/index.js';
import { openOidcLogin, openToolgate, type Toolgate } from '../../host/toolgate.js';
import { DEFAULT_ORIGIN } from '../../records/audit/index.js';
import { type OriginPolicy, originPolicy } from '../mcp/index.js';
import { buildServer } from '../rest/index.js';
import { backgroundErrorLog } from './background-errors.js';
import { DEMO_ACTOR_ID, reviewDemoCatalog } from './demo-reviews.js';
import { firstAdminBanner, runtimeAsTyped } from './first-admin.js';
import { jsonText } from './output.js';
import { AUDIT_KEY_FILE, approvalSigner, auditSigner, teamsFromEnv } from './runtime-files.js';
import { readStartSettings, startConfiguration } from './start-settings.js';
import { onStopSignals, stopGateway } from './stop-signals.js';

export interface ServeOptions {
  readonly dataDir: string;
  readonly db: string;
  readonly host: string;
  readonly port: number;
  readonly demo: boolean;
  readonly adminTokenFile: string;
  /**
   * false (`--no-admin-token`, or TOOLGATE_ADMIN_TOKEN=disabled): the bootstrap admin token is
   * off; its file is neither read nor created and only personal operator tokens open admin routes.
   */
  readonly adminToken?: boolean;
  readonly bodyLimit: number;
  readonly version: string;
  /** `--json`: the start banner as one JSON object (its lines in `banner`). */
  readonly json?: boolean;
  /** On SIGTERM or SIGINT, how long calls in flight may finish (stop-signals.ts); default 10. */
  readonly shutdownDeadlineSeconds?: number;
  /** How long an MCP call that waits for approval is held for its decision; default 45. */
  readonly approvalWaitSeconds?: number;
  /** Origins and Hosts /mcp accepts besides loopback ones (DNS-rebinding and CSRF defence). */
  readonly allowedOrigins?: readonly string[];
  readonly allowedHosts?: readonly string[];
  /** Where operators reach this gateway (console links, the single sign-on redirect). */
  readonly publicUrl?: string;
  /** Caps and admission control; each absent one keeps its default. */
  readonly limits?: {
    readonly maxSessionsPerAgent?: number;
    readonly userSessionShare?: number;
    readonly maxPendingApprovalsPerAgent?: number;
    readonly maxMcpSessions?: number;
    readonly maxInFlight?: number;
    readonly maxInFlightPerCaller?: number;
    readonly maxEventLoopDelayMs?: number;
  };
}

export const DEMO_CATALOG = fileURLToPath(new URL('../../../demo/catalog.yaml', import.meta.url));
const SWEEP_INTERVAL_MS = 60_000;
/** How long a stop lets calls in flight finish before it cuts what is still open. */
export const DEFAULT_SHUTDOWN_DEADLINE_S = 10;

function usage(message: string): ToolgateError<'INPUT_INVALID'> {
  return new ToolgateError('INPUT_INVALID', message, { problems: [] });
}

/** The options a start refuses before anything opens: port, body limit, deadline, origins. */
function checkedOptions(options: ServeOptions): { deadline: number; origins: OriginPolicy } {
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65_535) {
    throw usage(`--port must be an integer 0–65535, got ${options.port}`);
  }
  if (!Number.isInteger(options.bodyLimit) || options.bodyLimit < 1024) {
    throw usage(`--body-limit must be an integer of at least 1024 bytes, got ${options.bodyLimit}`);
  }
  const deadline = options.shutdownDeadlineSeconds ?? DEFAULT_SHUTDOWN_DEADLINE_S;
  if (!Number.isInteger(deadline) || deadline < 0 || deadline > 3600)
    throw usage(`--shutdown-deadline must be an integer 0–3600 seconds, got ${deadline}`);
  try {
    return {
      deadline,
      origins: originPolicy(options.allowedOrigins ?? [], options.allowedHosts ?? []),
    };
  } catch (err) {
    throw usage(err instanceof Error ? err.message : String(err));
  }
}

export async function serve(options: ServeOptions): Promise<void> {
  const { deadline, origins } = checkedOptions(options);
  const publicUrl = publicUrlOf(options);
  // Every setting and the files it names, read before anything opens: a typo fails the start
  // (the same readers as `toolgate config check`, start-settings.ts).
  const settings = readStartSettings(process.env, {
    publicUrl,
    adminTokenFile: options.adminTokenFile,
    adminTokenOff: options.adminToken === false,
    dataDir: options.dataDir,
  });
  const { oidc, notify } = settings;
  // The relying party the console's login routes use (/console/login/oidc, its callback); its
  // issuer is checked under the outbound rules here, resolved.
  const sso = oidc ? await openOidcLogin(oidc, settings.outbound) : null;
  const limits = options.limits ?? {};
  // The data folder is the gateway's own, 0700, before any key in it is read or made.
  narrowPrivateDir(options.dataDir);
  const bootstrap = settings.adminToken;
  let admin: { token: string; created: boolean } | null = null;
  try {
    if (bootstrap !== null) {
      admin =
        bootstrap.token !== null
          ? { token: bootstrap.token, created: false }
          : loadOrCreateAdminToken(options.adminTokenFile, '--admin-token-file');
    }
  } catch (err) {
    throw usage(err instanceof Error ? err.message : String(err));
  }

  // Signals are handled from the start: a stop during start-up still closes the store cleanly.
  let tg: Toolgate | null = null;
  let app: FastifyInstance | null = null;
  let sweep: NodeJS.Timeout | undefined;
  let closing = false;
  onStopSignals(async (signal) => {
    if (closing) return;
    closing = true;
    clearInterval(sweep);
    process.stdout.write(`toolgate: ${signal}, shutting down (deadline ${deadline} s)\n`);
    await stopGateway(app, tg, deadline * 1000);
  });

  try {
    // The checkpoint key exists from the start, not from the first checkpoint: `audit verify`
    // on this data folder can check whatever the log holds, even if the server died before
    // signing anything (replicas sharing the folder create it once: the file is written `wx`).
    const auditKeyFile = join(options.dataDir, AUDIT_KEY_FILE);
    const made = [
      ...(existsSync(auditKeyFile) ? [] : [auditKeyFile]),
      ...(admin?.created ? [options.adminTokenFile] : []),
    ];
    const checkpointKey = auditSigner(options.dataDir, DEFAULT_ORIGIN);
    tg = await withdrawOnClosedStore(
      made,
      openToolgate({
        db: options.db,
        approvalSigner: () => approvalSigner(options.dataDir),
        auditSigner: () => checkpointKey,
        // Checked at the start when it exists (start-settings.ts); else made on first use.
        masterKey: settings.masterKey ?? (() => loadMasterKey({ dataDir: options.dataDir })),
        // A replica sequences the fleet's audit records, and logs audit failures (§5).
        audit: replicaAudit(settings.audit, () => app?.log ?? null),
        // No sandbox may see the gateway's own files (the database's are added by openToolgate).
        protectedPaths: [
          options.dataDir,
          options.adminTokenFile,
          ...(process.env.TOOLGATE_MASTER_KEY_FILE ? [process.env.TOOLGATE_MASTER_KEY_FILE] : []),
        ],
        ...startConfiguration(settings),
        teams: teamsFromEnv(),
        // Owner notices: the event record, retire dates and orphans checked every minute; an
        // orphan whose team has no channel goes to TOOLGATE_OWNER_FALLBACK_TEAM's, if set.
        owners: {
          checkIntervalMs: 60_000,
          fallbackTeam: process.env.TOOLGATE_OWNER_FALLBACK_TEAM?.trim() || null,
        },
        tracing: settings.tracing,
        caps: capsOf(limits),
      }),
    );
    let demoSummary = '';
    if (options.demo) {
      // The demo's own set: a team's `apply --prune` of its files never withdraws the demo.
      const result = await tg.admin.config.applyText(
        readFileSync(DEMO_CATALOG, 'utf8'),
        { id: DEMO_ACTOR_ID, via: 'system' },
        { set: 'demo' },
      );
      await reviewDemoCatalog(tg.admin);
      const created = result.changes.filter((c) => c.action !== 'unchanged').length;
      demoSummary = `demo catalog: ${result.changes.length} documents, ${created} new`;
    }
    await tg.admin.catalog.sweepLifecycle();
    app = await buildServer(tg, {
      adminToken: admin?.token ?? null,
      ...(sso ? { sso } : {}),
      bodyLimit: options.bodyLimit,
      version: options.version,
      ...(options.publicUrl !== undefined ? { publicUrl } : {}),
      mcp: { originPolicy: origins, ...mcpLimitsOf(limits, options.approvalWaitSeconds) },
      ...standingOf(limits),
      admission: {
        ...(limits.maxInFlight !== undefined ? { maxInFlight: limits.maxInFlight } : {}),
        ...(limits.maxInFlightPerCaller !== undefined
          ? { maxInFlightPerCaller: limits.maxInFlightPerCaller }
          : {}),
        ...(limits.maxEventLoopDelayMs !== undefined
          ? { maxEventLoopDelayMs: limits.maxEventLoopDelayMs }
          : {}),
      },
      logger: { level: settings.logLevel },
    });
    const running = tg;
    const server = app;
    sweep = setInterval(() => {
      running.admin
        .sweep()
        .catch((err: unknown) =>
          server.log.error(
            { err },
            'rate counter, idempotency and classified-store retention sweep failed',
          ),
        );
      running.admin.catalog
        .sweepLifecycle()
        .catch((err: unknown) => server.log.error({ err }, 'lifecycle sweep failed'));
      running.admin.consoleSessions
        .sweep()
        .catch((err: unknown) => server.log.error({ err }, 'console session sweep failed'));
    }, SWEEP_INTERVAL_MS);
    sweep.unref();

    let address: string;
    try {
      address = await app.listen({ host: options.host, port: options.port });
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
        throw usage(
          `cannot listen on ${options.host}:${options.port} (${code}); choose another --port or --host`,
        );
      }
      throw err;
    }
    const accounts = (await tg.admin.operators.page({ limit: 1 })).items.length;
    const lines = [
      `toolgate ${options.version} listening on ${address}`,
      `  database:    ${tg.admin.health.location}`,
      ...(demoSummary ? [`  ${demoSummary}`] : []),
      `  API docs:    ${address}/docs   (OpenAPI: ${address}/openapi.json)`,
      `  console:     ${address}/console`,
      ...firstAdminBanner(
        {
          consoleUrl: `${address}/console`,
          bootstrapEnabled: admin !== null,
          demo: options.demo,
          script: process.argv[1] ?? 'toolgate',
          runtime: runtimeAsTyped(),
          cwd: process.cwd(),
          db: options.db,
          dataDir: options.dataDir,
        },
        accounts,
      ),
      ...(admin
        ? adminTokenBanner(admin, bootstrap?.fromEnv === true, options)
        : ['  admin token: disabled (admin routes take personal operator tokens only)']),
      `  try:         curl -H "Authorization: Bearer <${admin ? 'admin token' : 'personal token'}>" ${address}/v1/tools`,
    ];
    if (sso) {
      lines.push(`  single sign-on: ${sso.issuer} (redirect ${oidc?.redirectUri ?? ''})`);
      // Discovery is tried once now so a wrong issuer shows in the log before anyone signs in.
      sso
        .metadata()
        .catch((err: unknown) =>
          server.log.warn({ err }, 'single sign-on: the provider cannot be discovered yet'),
        );
    }
    if (notify.webhookUrls.length > 0)
      lines.push(`  notifications: ${notify.webhookUrls.length} webhook(s), links to ${publicUrl}`);
    process.stdout.write(
      options.json === true
        ? `${jsonText({ listening: address, version: options.version, database: tg.admin.health.location, banner: lines })}\n`
        : `${lines.join('\n')}\n`,
    );
  } catch (err) {
    clearInterval(sweep);
    closing = true;
    await app?.close().catch(() => {});
    await tg?.close().catch(() => {});
    throw err;
  }
}

/**
 * A replica's audit settings: it campaigns to sequence the fleet's audit records
 * (docs/architecture.md §5), and its audit failures (a record given up, a failed checkpoint or
 * integration: while integrations fail, no replica's records reach the chain) are logged through
 * the server's logger (stderr before it exists), a repeated one once a minute with its count.
 */
function replicaAudit<T extends object>(given: T, logger: () => FastifyBaseLogger | null) {
  return { ...given, sequencer: true, onError: backgroundErrorLog('audit', logger) };
}

/** TOOLGATE_PUBLIC_URL / --public-url, else the address served (a wildcard bind as loopback). */
function publicUrlOf(options: ServeOptions): string {
  if (options.publicUrl !== undefined) {
    let url: URL;
    try {
      url = new URL(options.publicUrl);
    } catch {
      throw usage(`--public-url is not a URL: ${options.publicUrl}`);
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password)
      throw usage('--public-url must be http(s) without credentials');
    return url.origin + url.pathname.replace(/\/$/, '');
  }
  const host = options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${options.port}`;
}

/**
 * The banner lines about the admin token. stdout is a log under systemd or in a container, and
 * logs are kept and shipped: the token itself is printed only on the start that created it (the
 * operator needs it once), and only to a terminal, where a person reads it; a start whose stdout
 * is a pipe or a file (a container's or systemd's log) says where the token is, never what it is.
 */
function adminTokenBanner(
  admin: { readonly token: string; readonly created: boolean },
  fromEnv: boolean,
  options: Pick<ServeOptions, 'adminTokenFile' | 'json'>,
): string[] {
  const file = options.adminTokenFile;
  const toTerminal = process.stdout.isTTY === true && options.json !== true;
  if (fromEnv) return ['  admin token: from TOOLGATE_ADMIN_TOKEN (not printed)'];
  if (!admin.created) return [`  admin token: in ${file} (not printed)`];
  if (!toTerminal) {
    return [
      `  admin token: created now in ${file}`,
      '               (not printed: stdout is not a terminal, and a log keeps what it is given)',
    ];
  }
  return [
    `  admin token: ${admin.token}`,
    `               (created now and kept in ${file}; printed this once only)`,
  ];
}

/** A user's standing streams of an agent: the same share as of its sessions. */
function standingOf(limits: NonNullable<ServeOptions['limits']>) {
  return limits.userSessionShare !== undefined
    ? { standing: { streams: { userShare: limits.userSessionShare } } }
    : {};
}

/**
 * The MCP front's session limits `serve` was given, and how long it holds a call for its
 * approval; each absent one keeps its default. One agent's MCP sessions are its gate sessions: the
 * same cap and the same share of a principal (within which a session waiting on a person is
 * spared) hold on both.
 */
function mcpLimitsOf(limits: NonNullable<ServeOptions['limits']>, approvalWaitSeconds?: number) {
  return {
    ...(approvalWaitSeconds !== undefined ? { approvalWaitMs: approvalWaitSeconds * 1000 } : {}),
    ...(limits.maxMcpSessions !== undefined ? { maxSessions: limits.maxMcpSessions } : {}),
    ...(limits.maxSessionsPerAgent !== undefined
      ? { maxSessionsPerAgent: limits.maxSessionsPerAgent }
      : {}),
    ...(limits.userSessionShare !== undefined ? { userSessionShare: limits.userSessionShare } : {}),
  };
}

/** The per-agent caps `serve` was given; each absent one keeps its default. */
function capsOf(limits: NonNullable<ServeOptions['limits']>) {
  return {
    ...(limits.maxSessionsPerAgent !== undefined
      ? { maxSessionsPerAgent: limits.maxSessionsPerAgent }
      : {}),
    ...(limits.userSessionShare !== undefined ? { userSessionShare: limits.userSessionShare } : {}),
    ...(limits.maxPendingApprovalsPerAgent !== undefined
      ? { maxPendingApprovalsPerAgent: limits.maxPendingApprovalsPerAgent }
      : {}),
  };
}

/**
 * A store too new for this version, or out of reach, is left as it was ("Nothing was changed"):
 * the key files this start created for it (the admin token, the audit signing key) go too.
 */
async function withdrawOnClosedStore<T>(made: readonly string[], opening: Promise<T>): Promise<T> {
  try {
    return await opening;
  } catch (err) {
    if (err instanceof ToolgateError && ['STORE_TOO_NEW', 'STORE_UNAVAILABLE'].includes(err.code)) {
      for (const file of made) rmSync(file, { force: true });
    }
    throw err;
  }
}
