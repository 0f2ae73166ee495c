/**
 * @module The real runtimes the conformance suite runs against, each with the tools its scenarios
 * need: the inline runtime with test handlers; the command runtime in the process and namespace
 * (bubblewrap) drivers, with the egress proxy for the namespace; the http runtime against a real
 * HTTPS server on 127.0.0.1 (test CA, table resolver, only that address exempt); the mcp runtime
 * over the real upstream pool, the provider registered in a real gateway, its upstream the repo's
 * flaky fixture server in the namespace sandbox. A scenario a runtime cannot have is a string:
 * the reason, for a named skip.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Actor } from '../../src/core/index.js';
import { checkToolDefinition, type ToolDefinition } from '../../src/domain/catalog/index.js';
import type { CallCredentials } from '../../src/domain/credentials/index.js';
import { UpstreamPool } from '../../src/execution/providers/index.js';
import {
  CommandRuntime,
  HttpRuntime,
  HttpToolRunner,
  InlineExecutor,
  InlineRuntime,
  McpRuntime,
  type RuntimeContext,
  type ToolRuntime,
} from '../../src/execution/runtimes/index.js';
import {
  type ByteBudget,
  createByteBudget,
  EgressProxy,
  SandboxService,
} from '../../src/execution/sandbox/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { FIXTURES, nodeProvider, READ_PUBLIC } from '../providers/provider-support.js';
import { backends } from '../support/backends.js';
import { ROOT } from '../support/cli.js';
import { tableResolver } from '../support/egress.js';
import { classifyReviewed } from '../support/reviews.js';
import { validTool } from '../support/tools.js';

/** What a conformance rule asks a runtime to run. */
export type Scenario =
  | 'ok'
  | 'crash'
  | 'hang'
  | 'flood'
  | 'garbage'
  | 'egress'
  | 'egress_refused'
  | 'echo_credential';

export interface Case {
  readonly def: ToolDefinition;
  readonly args: Record<string, unknown>;
  readonly credentials?: CallCredentials;
}

export interface RuntimeHarness {
  readonly name: string;
  readonly runtime: ToolRuntime;
  /** The tool for a scenario, or why this runtime cannot have one (the skip's name says it). */
  tool(scenario: Scenario): Case | string;
  close(): Promise<void>;
}

/** The wall time of every scenario tool: short, so the hang cases end quickly. */
export const WALL_MS = 1_500;
/** The wall time of the node fetcher the egress cases run in a sandbox. */
const FETCH_WALL_MS = 15_000;
/** The output cap of every scenario tool. */
export const OUTPUT_BYTES = 4_096;
/** The credential handed to scenario tools; no result may carry it past its runtime. */
export const SECRET = 'sk-conformance-credential-9f8e7d6c5b4a';

export function credentialsFor(env: string | null, header: string | null): CallCredentials {
  return {
    env: env ? { [env]: SECRET } : {},
    headers: header ? { [header]: SECRET } : {},
    redact: [SECRET],
    audience: ['api.example.test'],
  };
}

/** A context as the gate builds it after every check passed. */
export function contextFor(
  c: Case,
  over: {
    budget?: ByteBudget;
    signal?: AbortSignal;
    validateOutput?: (v: unknown) => boolean;
  } = {},
): RuntimeContext {
  return {
    callId: `call-${Math.random().toString(36).slice(2)}`,
    sessionId: 'conformance-session',
    agentId: 'conformance-agent',
    userId: null,
    credentials: c.credentials ?? null,
    budget: over.budget ?? createByteBudget(1_000_000),
    destinations: new Set<string>(),
    wallTimeMs: c.def.sandbox.limits.wall_time_ms,
    validateOutput: over.validateOutput ?? (() => true),
    ...(over.signal ? { signal: over.signal } : {}),
  };
}

/** A checked definition with the scenario's limits, then the fields registration would refuse. */
function definition(
  spec: Record<string, unknown>,
  after: Partial<ToolDefinition> = {},
  wallTimeMs = WALL_MS,
): ToolDefinition {
  const checked = checkToolDefinition(
    validTool({
      data_access: 'none',
      input_schema: { type: 'object', additionalProperties: false, properties: {} },
      output_schema: { type: 'object' },
      ...spec,
    }),
  );
  if (!checked.ok) throw new Error(JSON.stringify(checked.problems));
  const def = checked.definition;
  return {
    ...def,
    ...after,
    sandbox: {
      ...def.sandbox,
      ...(after.sandbox ?? {}),
      limits: {
        ...def.sandbox.limits,
        wall_time_ms: wallTimeMs,
        output_bytes: OUTPUT_BYTES,
      },
    },
  };
}

// ---------------------------------------------------------------- inline

export function inlineHarness(): RuntimeHarness {
  const executor = new InlineExecutor()
    .register('conf.ok', () => ({ status: 'ok' }))
    .register('conf.crash', () => {
      throw new Error(`handler failed holding ${SECRET}`);
    })
    .register('conf.args', (a) => ({ seen: a }));
  const inline = (handler: string) => definition({ runtime: { kind: 'inline', handler } });
  return {
    name: 'inline',
    runtime: new InlineRuntime(executor),
    tool(s) {
      switch (s) {
        case 'ok':
          return { def: inline('conf.ok'), args: {} };
        case 'crash':
          return { def: inline('conf.crash'), args: {}, credentials: credentialsFor(null, null) };
        case 'echo_credential':
          // A handler gets the checked arguments only: the credential is never its to echo.
          return {
            def: inline('conf.args'),
            args: { a: 1 },
            credentials: credentialsFor('T', 'X'),
          };
        case 'hang':
          return 'inline handlers are trusted in-process code: a deadline cannot stop synchronous JavaScript, so no wall time is enforced';
        case 'flood':
          return "an inline result is a value, not a stream: the gate's result step caps it (result.size)";
        case 'garbage':
          return "an inline handler returns a value, never unparsable text: the gate's output schema judges it";
        case 'egress':
        case 'egress_refused':
          return 'inline handlers run in process and get no network lease: there is no traffic to charge or refuse';
      }
    },
    close: async () => {},
  };
}

// ---------------------------------------------------------------- command

const ECHO_TOOL = join(ROOT, 'test', 'fixtures', 'sandbox', 'echo-tool.sh');
const FETCH = join(ROOT, 'test', 'fixtures', 'egress', 'fetch-through-proxy.mjs');
const TLS = join(ROOT, 'test', 'fixtures', 'egress-tls');

export const sandboxService = new SandboxService();
export const hasBwrap = await sandboxService
  .runner('namespace')
  .probe()
  .then((p) => p.available);
export const hasGvisor = await sandboxService
  .runner('gvisor')
  .probe()
  .then((p) => p.available);

/** A real HTTPS API on 127.0.0.1 (test certificate for api.example.test) for http and proxy. */
export interface TestApi {
  readonly port: number;
  close(): Promise<void>;
}

export async function startApi(): Promise<TestApi> {
  const server = https.createServer(
    { key: readFileSync(join(TLS, 'server.key')), cert: readFileSync(join(TLS, 'server.pem')) },
    (req, res) => {
      const url = req.url ?? '';
      const auth = String(req.headers.authorization ?? '');
      req.resume();
      req.on('end', () => {
        if (url.includes('/hang')) return;
        if (url.includes('/crash')) {
          req.socket.destroy();
          return;
        }
        if (url.includes('/big')) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ blob: 'b'.repeat(OUTPUT_BYTES * 4) }));
        } else if (url.includes('/text')) {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end(`not json ${auth}`);
        } else if (url.includes('/fail')) {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: 'bad token', token: auth }));
        } else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ status: 'ok', path: url, pad: 'x'.repeat(300) }));
        }
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const RESOLVER = {
  'api.example.test': ['127.0.0.1'],
  'other.example.test': ['127.0.0.1'],
  'meta.example.test': ['169.254.169.254'],
};

export function commandHarness(
  driver: 'process' | 'namespace' | 'gvisor',
  api: TestApi,
): RuntimeHarness {
  const proxy = new EgressProxy({
    resolver: tableResolver(RESOLVER),
    unsafeTestTargets: ['127.0.0.1:443'],
    unsafeTestPorts: { '127.0.0.1:443': api.port },
  });
  const command = (argv: string[], extra: Record<string, unknown> = {}) =>
    definition(
      { runtime: { kind: 'command', argv }, ...extra },
      { sandbox: { isolation: driver, network: 'none' } as ToolDefinition['sandbox'] },
    );
  const fetcher = () => {
    const d = definition(
      {
        runtime: { kind: 'command', argv: ['/usr/bin/node', FETCH] },
        data_access: 'public',
        egress: { mode: 'constrained', hosts: ['api.example.test'] },
      },
      { sandbox: { isolation: driver, network: 'egress_proxy' } as ToolDefinition['sandbox'] },
      // Node starting under gVisor on a loaded two-core machine can take past WALL_MS; the
      // egress cases test bytes and hosts, not the wall time (the hang case does that).
      FETCH_WALL_MS,
    );
    return d;
  };
  const noNetwork = `process isolation is only for pure tools (no network): see command/namespace`;
  return {
    name: `command/${driver}`,
    runtime: new CommandRuntime(sandboxService, proxy),
    tool(s) {
      switch (s) {
        case 'ok':
          return { def: command(['/bin/sh', ECHO_TOOL]), args: { a: 1 } };
        case 'crash':
          // Prints its credential to stdout and stderr, then fails: neither may reach the result.
          return {
            def: command(['/bin/sh', '-c', 'echo "$API_TOKEN"; echo "$API_TOKEN" >&2; exit 3']),
            args: {},
            credentials: credentialsFor('API_TOKEN', null),
          };
        case 'hang':
          return { def: command(['/bin/sh', ECHO_TOOL, 'sleep']), args: {} };
        case 'flood':
          return { def: command(['/bin/sh', ECHO_TOOL, 'flood']), args: {} };
        case 'garbage':
          return {
            def: command(['/bin/sh', '-c', 'echo "not json $API_TOKEN"']),
            args: {},
            credentials: credentialsFor('API_TOKEN', null),
          };
        case 'echo_credential':
          return {
            def: command(['/bin/sh', '-c', 'echo "{\\"token\\":\\"$API_TOKEN\\"}"']),
            args: {},
            credentials: credentialsFor('API_TOKEN', null),
          };
        case 'egress':
          if (driver === 'process') return noNetwork;
          return {
            def: fetcher(),
            args: { host: 'api.example.test', path: '/v1/items/1' },
            credentials: credentialsFor('API_TOKEN', null),
          };
        case 'egress_refused':
          if (driver === 'process') return noNetwork;
          return { def: fetcher(), args: { host: 'other.example.test', path: '/v1/x' } };
      }
    },
    close: () => proxy.close(),
  };
}

// ---------------------------------------------------------------- http

export function httpHarness(api: TestApi): RuntimeHarness {
  const runner = new HttpToolRunner({
    resolver: tableResolver(RESOLVER),
    unsafeTestTargets: [`127.0.0.1:${api.port}`],
    unsafeTestCa: readFileSync(join(TLS, 'ca.pem'), 'utf8'),
    ports: [api.port],
  });
  const http = (path: string, host = 'api.example.test') => {
    const d = definition({
      data_access: 'public',
      egress: { mode: 'constrained', hosts: ['api.example.test', 'meta.example.test'] },
      runtime: { kind: 'http', base_url: `https://${host}/v1`, method: 'GET', path },
      credentials: { secret: 'api-token', inject: 'header', as: 'Authorization' },
    });
    // Registration keeps default ports; the test API has the kernel's.
    return {
      ...d,
      runtime: { ...d.runtime, base_url: `https://${host}:${api.port}/v1` },
    } as ToolDefinition;
  };
  const withSecret = (path: string, host?: string): Case => ({
    def: http(path, host),
    args: {},
    credentials: credentialsFor(null, 'Authorization'),
  });
  return {
    name: 'http',
    runtime: new HttpRuntime(runner),
    tool(s) {
      switch (s) {
        case 'ok':
        case 'egress':
          return withSecret('/ok');
        case 'crash':
          return withSecret('/crash');
        case 'hang':
          return withSecret('/hang');
        case 'flood':
          return withSecret('/big');
        case 'garbage':
          return withSecret('/text');
        case 'echo_credential':
          return withSecret('/fail');
        case 'egress_refused':
          return withSecret('/ok', 'meta.example.test');
      }
    },
    close: async () => {},
  };
}

// ---------------------------------------------------------------- mcp

const admin: Actor = { id: 'conformance-admin', via: 'library' };

export async function mcpHarness(): Promise<RuntimeHarness & { readonly tg: Gateway }> {
  const [sqlite] = backends();
  if (!sqlite) throw new Error('no sqlite backend');
  const fresh = await sqlite.fresh();
  const tg = await openGateway({ db: fresh.url, detectors: false });
  await tg.providers.register(
    nodeProvider('flaky', join(FIXTURES, 'flaky-server.mjs'), [], {
      binds: [{ source: FIXTURES }],
    }),
    admin,
  );
  const defs = new Map<string, ToolDefinition>();
  for (const name of ['ping', 'crash', 'hang']) {
    const { tool } = await classifyReviewed(
      tg,
      'flaky',
      name,
      { ...READ_PUBLIC, wall_time_ms: WALL_MS },
      admin,
    );
    defs.set(name, tool.definition);
  }
  const pool = new UpstreamPool();
  const def = (name: string): ToolDefinition => {
    const d = defs.get(name);
    if (!d) throw new Error(`no ${name}`);
    return d;
  };
  return {
    name: 'mcp',
    tg,
    // The provider's administration (spec, launch, pins) is the gateway's; the pool is ours.
    runtime: new McpRuntime(tg.providers, pool),
    tool(s) {
      switch (s) {
        case 'ok':
          return { def: def('ping'), args: { n: 1 } };
        case 'crash':
          return { def: def('crash'), args: {}, credentials: credentialsFor('T', 'X') };
        case 'hang':
          return { def: def('hang'), args: {} };
        case 'echo_credential':
          // The mcp runtime forwards no credential: an upstream authenticates on its own.
          return { def: def('ping'), args: { n: 2 }, credentials: credentialsFor('T', 'X') };
        case 'flood':
          return "the mcp runtime passes the upstream's result on whole: the gate's result step caps it (result.size)";
        case 'garbage':
          return 'malformed JSON-RPC is refused by the SDK client (provider.error); structured content against the output schema: rule "checks an upstream\'s structured content"';
        case 'egress':
        case 'egress_refused':
          return "a stdio upstream runs with no network; an HTTP provider's bytes are charged by its checked fetch (test/providers/http-provider.test.ts)";
      }
    },
    close: async () => {
      await pool.close();
      await tg.close();
      await fresh.drop();
    },
  };
}
