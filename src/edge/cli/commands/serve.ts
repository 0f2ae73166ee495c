/**
 * @module `toolgate serve`: the gateway (REST, OpenAPI docs, MCP over HTTP) with its limits and admission options.
 */
import { join } from 'node:path';
import { type Command, Option } from 'commander';
import {
  approvalWaitOption,
  dbUrl,
  type GlobalOptions,
  int,
  share,
  splitList,
  VERSION,
} from '../command-kit.js';
import { reportError } from '../output.js';

/** The flags of `serve` as commander parsed them. */
interface ServeFlags {
  host: string;
  port: number;
  demo?: boolean;
  adminTokenFile?: string;
  adminToken: boolean;
  bodyLimit: number;
  allowedOrigins?: string;
  allowedHosts?: string;
  publicUrl?: string;
  shutdownDeadline: number;
  maxSessionsPerAgent: number;
  userSessionShare: number;
  maxPendingApprovalsPerAgent: number;
  maxMcpSessions: number;
  maxInFlight: number;
  maxInFlightPerCaller: number;
  maxEventLoopDelayMs: number;
  approvalWait: number;
}

export function registerServe(program: Command): void {
  const serve = program
    .command('serve')
    .description('start the gateway (REST + OpenAPI docs) on 127.0.0.1');
  for (const option of allOptions()) serve.addOption(option);
  serve.action(async (opts: ServeFlags) => {
    const globals = program.opts<GlobalOptions>();
    try {
      // Loaded only here: the other commands need not pay for Fastify and the docs UI.
      const { serve } = await import('../serve.js');
      await serve({
        ...fromGlobals(globals),
        db: dbUrl(globals),
        host: opts.host,
        port: opts.port,
        demo: opts.demo === true,
        adminTokenFile: opts.adminTokenFile ?? join(globals.dataDir, 'admin-token'),
        adminToken: opts.adminToken,
        bodyLimit: opts.bodyLimit,
        version: VERSION,
        allowedOrigins: splitList(opts.allowedOrigins),
        allowedHosts: splitList(opts.allowedHosts),
        ...(opts.publicUrl ? { publicUrl: opts.publicUrl } : {}),
        shutdownDeadlineSeconds: opts.shutdownDeadline,
        approvalWaitSeconds: opts.approvalWait,
        limits: {
          maxSessionsPerAgent: opts.maxSessionsPerAgent,
          userSessionShare: opts.userSessionShare,
          maxPendingApprovalsPerAgent: opts.maxPendingApprovalsPerAgent,
          maxMcpSessions: opts.maxMcpSessions,
          maxInFlight: opts.maxInFlight,
          maxInFlightPerCaller: opts.maxInFlightPerCaller,
          maxEventLoopDelayMs: opts.maxEventLoopDelayMs,
        },
      });
    } catch (err) {
      process.exitCode = reportError(err, globals.json === true);
    }
  });
}

/** Every option of `serve`, in the order its help lists them. */
function allOptions(): Option[] {
  return [...serveOptions(), ...limitOptions(), approvalWaitOption(), shutdownOption()];
}

/** Where and how `serve` listens; docs/configuration.md has each one's variable and settings key. */
function serveOptions(): Option[] {
  return [
    new Option('--host <host>', 'interface to bind').env('TOOLGATE_HOST').default('127.0.0.1'),
    new Option('--port <port>', 'port')
      .env('TOOLGATE_PORT')
      .default(8080)
      .argParser(int(0, 65_535)),
    new Option('--demo', 'load the demo catalog (idempotent)'),
    new Option(
      '--admin-token-file <path>',
      'where the admin token is kept, created on first start (default: <data-dir>/admin-token)',
    ).env('TOOLGATE_ADMIN_TOKEN_FILE'),
    new Option(
      '--no-admin-token',
      'disable the bootstrap admin token (also TOOLGATE_ADMIN_TOKEN=disabled): only personal operator tokens open admin routes',
    ),
    new Option('--body-limit <bytes>', 'largest request body')
      .env('TOOLGATE_BODY_LIMIT')
      .default(1_048_576)
      .argParser(int(1024, 1_073_741_824)),
    new Option(
      '--allowed-origins <origins>',
      'comma-separated browser origins (scheme://host[:port]) allowed at /mcp besides loopback ones',
    ).env('TOOLGATE_ALLOWED_ORIGINS'),
    new Option(
      '--allowed-hosts <hosts>',
      'comma-separated Host names (or host:port) /mcp answers besides loopback names',
    ).env('TOOLGATE_ALLOWED_HOSTS'),
    new Option(
      '--public-url <url>',
      'where operators reach this gateway (console links, single sign-on redirect)',
    ).env('TOOLGATE_PUBLIC_URL'),
  ];
}

/** The global options serve takes: the data folder, and --json (its start banner as JSON). */
function fromGlobals(globals: GlobalOptions): { dataDir: string; json: boolean } {
  return { dataDir: globals.dataDir, json: globals.json === true };
}

/** Caps and admission; docs/operations.md "Limits and overload" has the rule and the defaults. */
function limitOptions(): Option[] {
  return [
    new Option('--max-sessions-per-agent <n>', 'open sessions of one agent (REST + MCP)')
      .env('TOOLGATE_MAX_SESSIONS_PER_AGENT')
      .default(64)
      .argParser(int(1, 1_000_000)),
    new Option(
      '--user-session-share <fraction>',
      "share of an agent's sessions and event streams one token user may hold, and of its pending approvals one principal (a token user, or the agent's keys) may hold (at least 1)",
    )
      .env('TOOLGATE_USER_SESSION_SHARE')
      .default(0.5)
      .argParser(share),
    new Option('--max-pending-approvals-per-agent <n>', 'pending approval requests of one agent')
      .env('TOOLGATE_MAX_PENDING_APPROVALS_PER_AGENT')
      .default(50)
      .argParser(int(1, 1_000_000)),
    new Option('--max-mcp-sessions <n>', 'MCP sessions overall (the LRU idle one is evicted)')
      .env('TOOLGATE_MAX_MCP_SESSIONS')
      .default(1000)
      .argParser(int(1, 1_000_000)),
    new Option('--max-in-flight <n>', 'requests handled at once (a bounded queue waits ≤ 2 s)')
      .env('TOOLGATE_MAX_IN_FLIGHT')
      .default(64)
      .argParser(int(1, 100_000)),
    new Option(
      '--max-in-flight-per-caller <n>',
      'running requests of one agent or user (and of one credential before authentication)',
    )
      .env('TOOLGATE_MAX_IN_FLIGHT_PER_CALLER')
      .default(16)
      .argParser(int(1, 100_000)),
    new Option('--max-event-loop-delay-ms <ms>', 'refuse new requests while the loop lags (0: off)')
      .env('TOOLGATE_MAX_EVENT_LOOP_DELAY_MS')
      .default(1000)
      .argParser(int(0, 600_000)),
  ];
}

/** On SIGTERM or SIGINT (docs/operations.md "Stopping"). */
function shutdownOption(): Option {
  return new Option(
    '--shutdown-deadline <seconds>',
    'on SIGTERM or SIGINT, how long calls in flight may finish before their connections are cut',
  )
    .env('TOOLGATE_SHUTDOWN_DEADLINE')
    .default(10)
    .argParser(int(0, 3600));
}

/**
 * What `serve` would refuse of `env`'s values for its own options (the body limit, the caps, the
 * shutdown deadline…), each read by the option's own parser: `toolgate config check` reports them
 * as a start would (attack round 22, Y5). Each names the variable; the file's values were already
 * checked against its schema.
 */
export function serveOptionProblems(
  env: NodeJS.ProcessEnv,
): { readonly env: string; readonly message: string }[] {
  const found: { env: string; message: string }[] = [];
  for (const option of allOptions()) {
    const name = option.envVar;
    const value = name === undefined ? undefined : env[name];
    if (name === undefined || value === undefined || !option.parseArg) continue;
    try {
      option.parseArg(value, option.defaultValue);
    } catch (err) {
      found.push({ env: name, message: err instanceof Error ? err.message : String(err) });
    }
  }
  return found;
}
