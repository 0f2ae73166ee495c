/** @module `toolgate serve`: opens the store, loads the demo catalog if asked, serves REST on loopback. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { parse as parseYaml } from 'yaml';
import type { DetectorsConfigInput } from '../audit/detectors/index.js';
import { DEFAULT_ORIGIN } from '../audit/index.js';
import { ToolgateError } from '../core/index.js';
import { loadMasterKey } from '../credentials/index.js';
import { buildServer } from '../http/index.js';
import { checkAdminTokenStrength, loadOrCreateAdminToken } from '../identity/index.js';
import { type OriginPolicy, originPolicy } from '../mcp/index.js';
import { openToolgate, type Toolgate } from '../toolgate.js';
import {
  approvalSigner,
  approverSecrets,
  auditSigner,
  jwtConfigFromEnv,
  teamsFromEnv,
} from './runtime-files.js';

export interface ServeOptions {
  readonly dataDir: string;
  readonly db: string;
  readonly host: string;
  readonly port: number;
  readonly demo: boolean;
  readonly adminTokenFile: string;
  readonly bodyLimit: number;
  readonly version: string;
  /** Origins and Hosts /mcp accepts besides loopback ones (DNS-rebinding and CSRF defence). */
  readonly allowedOrigins?: readonly string[];
  readonly allowedHosts?: readonly string[];
  /** Caps and admission control; each absent one keeps its default. */
  readonly limits?: {
    readonly maxSessionsPerAgent?: number;
    readonly maxPendingApprovalsPerAgent?: number;
    readonly maxMcpSessions?: number;
    readonly maxInFlight?: number;
    readonly maxInFlightPerCaller?: number;
    readonly maxEventLoopDelayMs?: number;
  };
}

export const DEMO_CATALOG = fileURLToPath(new URL('../../demo/catalog.yaml', import.meta.url));
const SWEEP_INTERVAL_MS = 60_000;

/** Detector configuration from the JSON or YAML file named by TOOLGATE_DETECTORS, if any. */
function detectorsFromEnv(): { detectors?: DetectorsConfigInput } {
  const file = process.env.TOOLGATE_DETECTORS;
  if (!file) return {};
  try {
    // Validated (every problem listed) when the gateway opens.
    return { detectors: parseYaml(readFileSync(file, 'utf8')) as DetectorsConfigInput };
  } catch (err) {
    throw usage(`TOOLGATE_DETECTORS: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function usage(message: string): ToolgateError<'INPUT_INVALID'> {
  return new ToolgateError('INPUT_INVALID', message, { problems: [] });
}

export async function serve(options: ServeOptions): Promise<void> {
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65_535) {
    throw usage(`--port must be an integer 0–65535, got ${options.port}`);
  }
  if (!Number.isInteger(options.bodyLimit) || options.bodyLimit < 1024) {
    throw usage(`--body-limit must be an integer of at least 1024 bytes, got ${options.bodyLimit}`);
  }
  let origins: OriginPolicy;
  try {
    origins = originPolicy(options.allowedOrigins ?? [], options.allowedHosts ?? []);
  } catch (err) {
    throw usage(err instanceof Error ? err.message : String(err));
  }
  const limits = options.limits ?? {};
  const fromEnv = process.env.TOOLGATE_ADMIN_TOKEN;
  let admin: { token: string; created: boolean };
  try {
    if (fromEnv !== undefined) checkAdminTokenStrength(fromEnv);
    admin =
      fromEnv !== undefined
        ? { token: fromEnv, created: false }
        : loadOrCreateAdminToken(options.adminTokenFile);
  } catch (err) {
    throw usage(err instanceof Error ? err.message : String(err));
  }

  // Signals are handled from the start: a stop during start-up still closes the store cleanly.
  let tg: Toolgate | null = null;
  let app: FastifyInstance | null = null;
  let sweep: NodeJS.Timeout | undefined;
  let closing = false;
  const shutdown = async (signal: string, code: number) => {
    if (closing) return;
    closing = true;
    clearInterval(sweep);
    if (signal) process.stdout.write(`toolgate: ${signal}, shutting down\n`);
    try {
      await app?.close();
      await tg?.close();
    } finally {
      process.exit(code);
    }
  };
  process.once('SIGINT', () => void shutdown('SIGINT', 0));
  process.once('SIGTERM', () => void shutdown('SIGTERM', 0));

  try {
    const jwt = jwtConfigFromEnv();
    tg = await openToolgate({
      db: options.db,
      approvalSigner: () => approvalSigner(options.dataDir),
      auditSigner: () => auditSigner(options.dataDir, DEFAULT_ORIGIN),
      approverTotpSecrets: approverSecrets(options.dataDir),
      masterKey: () => loadMasterKey({ dataDir: options.dataDir }),
      // No sandbox may see the gateway's own files (the database's are added by openToolgate).
      protectedPaths: [
        options.dataDir,
        options.adminTokenFile,
        ...(process.env.TOOLGATE_MASTER_KEY_FILE ? [process.env.TOOLGATE_MASTER_KEY_FILE] : []),
      ],
      ...(jwt ? { jwt } : {}),
      teams: teamsFromEnv(),
      ...detectorsFromEnv(),
      caps: {
        ...(limits.maxSessionsPerAgent !== undefined
          ? { maxSessionsPerAgent: limits.maxSessionsPerAgent }
          : {}),
        ...(limits.maxPendingApprovalsPerAgent !== undefined
          ? { maxPendingApprovalsPerAgent: limits.maxPendingApprovalsPerAgent }
          : {}),
      },
    });
    let demoSummary = '';
    if (options.demo) {
      const result = await tg.admin.config.applyText(readFileSync(DEMO_CATALOG, 'utf8'), {
        id: 'system:demo',
        via: 'system',
      });
      const created = result.changes.filter((c) => c.action !== 'unchanged').length;
      demoSummary = `demo catalog: ${result.changes.length} documents, ${created} new`;
    }
    await tg.admin.catalog.sweepLifecycle();
    app = await buildServer(tg, {
      adminToken: admin.token,
      bodyLimit: options.bodyLimit,
      version: options.version,
      mcp: {
        originPolicy: origins,
        ...(limits.maxMcpSessions !== undefined ? { maxSessions: limits.maxMcpSessions } : {}),
        // One agent's MCP sessions are its gate sessions: the same cap holds on both.
        ...(limits.maxSessionsPerAgent !== undefined
          ? { maxSessionsPerAgent: limits.maxSessionsPerAgent }
          : {}),
      },
      admission: {
        ...(limits.maxInFlight !== undefined ? { maxInFlight: limits.maxInFlight } : {}),
        ...(limits.maxInFlightPerCaller !== undefined
          ? { maxInFlightPerCaller: limits.maxInFlightPerCaller }
          : {}),
        ...(limits.maxEventLoopDelayMs !== undefined
          ? { maxEventLoopDelayMs: limits.maxEventLoopDelayMs }
          : {}),
      },
      logger: { level: process.env.TOOLGATE_LOG_LEVEL ?? 'warn' },
    });
    const running = tg;
    const server = app;
    sweep = setInterval(() => {
      running.admin
        .sweep()
        .catch((err: unknown) =>
          server.log.error({ err }, 'rate counter and idempotency sweep failed'),
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
    const lines = [
      `toolgate ${options.version} listening on ${address}`,
      `  database:    ${tg.admin.health.location}`,
      ...(demoSummary ? [`  ${demoSummary}`] : []),
      `  API docs:    ${address}/docs   (OpenAPI: ${address}/openapi.json)`,
      `  console:     ${address}/console`,
      ...adminTokenBanner(admin, fromEnv !== undefined, options.adminTokenFile),
      `  try:         curl -H "Authorization: Bearer <admin token>" ${address}/v1/tools`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } catch (err) {
    clearInterval(sweep);
    closing = true;
    await app?.close().catch(() => {});
    await tg?.close().catch(() => {});
    throw err;
  }
}

/**
 * The banner lines about the admin token. stdout is a log under systemd or in a container, and
 * logs are kept and shipped: the token itself is printed only on the start that created it (the
 * operator needs it once); every other start says where it is, never what it is.
 */
function adminTokenBanner(
  admin: { readonly token: string; readonly created: boolean },
  fromEnv: boolean,
  file: string,
): string[] {
  if (fromEnv) return ['  admin token: from TOOLGATE_ADMIN_TOKEN (not printed)'];
  if (!admin.created) return [`  admin token: in ${file} (not printed)`];
  return [
    `  admin token: ${admin.token}`,
    `               (created now and kept in ${file}; printed this once only)`,
  ];
}
