/**
 * MCP gateway benchmark: tools/call round trips to server-everything's `echo` tool (run
 * over stdio), all with the same official SDK client, in one run:
 *   (a) direct: the SDK client over stdio to the server;
 *   (b) plain proxy: the SDK client over Streamable HTTP through mcp-proxy from npm
 *       (`mcp-proxy --host 127.0.0.1 --port P --server stream -- node EV stdio`), no security;
 *   (c) toolgate: the SDK client over Streamable HTTP to toolgate's /mcp — bearer authentication,
 *       the whole gate (schema, grants, policy, limits, flow, approvals), durable audit (SQLite,
 *       group commit), the upstream in the namespace sandbox (bubblewrap), pinned.
 * Sequential calls (one in flight), after a warm-up. Prints p50, p99 and calls/s of each, ratios
 * to (a) and c/b (goal: c/b <= 1.0). The last line printed is one JSON object.
 *
 *   npm run bench:mcp   (CALLS=2000 WARMUP=200 by default)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Actor } from '../src/core/index.js';
import { buildServer } from '../src/http/index.js';
import { openGateway } from '../src/toolgate.js';

// The SDK's HTTP client adds one abort listener per request to its session's signal; over
// thousands of calls Node warns of a leak that is the client's, not any gateway's.
setMaxListeners(0);

const CALLS = Number(process.env.CALLS ?? 2_000);
const WARMUP = Number(process.env.WARMUP ?? 200);
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const NODE_MODULES = join(ROOT, 'node_modules');
const EVERYTHING = join(NODE_MODULES, '@modelcontextprotocol/server-everything/dist/index.js');
const MCP_PROXY = join(NODE_MODULES, '.bin', 'mcp-proxy');
const admin: Actor = { id: 'bench', via: 'library' };

interface Figures {
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly calls_per_s: number;
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

async function measure(client: Client): Promise<Figures> {
  const call = async (i: number) => {
    const r = await client.callTool({ name: 'echo', arguments: { message: `m${i}` } });
    if (r.isError) throw new Error(`echo failed: ${JSON.stringify(r)}`);
  };
  for (let i = 0; i < WARMUP; i += 1) await call(i);
  const times: number[] = [];
  const start = performance.now();
  for (let i = 0; i < CALLS; i += 1) {
    const t0 = performance.now();
    await call(i);
    times.push(performance.now() - t0);
  }
  const total = performance.now() - start;
  times.sort((a, b) => a - b);
  return {
    p50_ms: round(quantile(times, 0.5)),
    p99_ms: round(quantile(times, 0.99)),
    calls_per_s: round((CALLS / total) * 1000),
  };
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

async function httpClient(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : {},
    }),
  );
  return client;
}

async function direct(): Promise<Figures> {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [EVERYTHING, 'stdio'],
      stderr: 'ignore',
    }),
  );
  try {
    return await measure(client);
  } finally {
    await client.close();
  }
}

async function plainProxy(): Promise<Figures> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    MCP_PROXY,
    [
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--server',
      'stream',
      '--',
      process.execPath,
      EVERYTHING,
      'stdio',
    ],
    { stdio: 'ignore' },
  );
  try {
    let client: Client | null = null;
    const until = Date.now() + 30_000;
    while (!client) {
      try {
        client = await httpClient(`http://127.0.0.1:${port}/mcp`);
      } catch (err) {
        if (Date.now() > until) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    try {
      return await measure(client);
    } finally {
      await client.close();
    }
  } finally {
    child.kill('SIGTERM');
  }
}

async function toolgate(): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-mcp-'));
  const tg = await openGateway({ db: `sqlite:${join(dir, 'tg.db')}` });
  try {
    await tg.config.apply(
      [
        {
          kind: 'Agent',
          spec: { id: 'bench-agent', display_name: 'Bench', description: 'Bench.', owner: 'bench' },
        },
        { kind: 'Grant', spec: { agent: 'bench-agent', capabilities: ['everything:use'] } },
        {
          kind: 'Provider',
          spec: {
            name: 'everything',
            owner: 'bench',
            command: ['/usr/bin/node', EVERYTHING, 'stdio'],
            isolation: 'namespace',
            binds: [{ source: NODE_MODULES }],
          },
        },
      ],
      admin,
    );
    await tg.providers.classify(
      'everything',
      'echo',
      {
        action_class: 'read',
        data_access: 'public',
        egress: { mode: 'none' },
        access_tier: 'public',
        required_capabilities: ['everything:use'],
      },
      admin,
    );
    const key = (await tg.keys.issue('bench-agent', admin)).apiKey;
    const app = await buildServer(tg, { adminToken: 'bench-admin-token-0123456789abcdef0123' });
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const client = await httpClient(`${base}/mcp`, key);
      try {
        return await measure(client);
      } finally {
        await client.close();
      }
    } finally {
      await app.close();
    }
  } finally {
    await tg.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const a = await direct();
console.log(
  `(a) SDK client over stdio, direct:           p50 ${a.p50_ms} ms  p99 ${a.p99_ms} ms  ${a.calls_per_s} calls/s`,
);
const b = await plainProxy();
console.log(
  `(b) SDK client over HTTP through mcp-proxy:  p50 ${b.p50_ms} ms  p99 ${b.p99_ms} ms  ${b.calls_per_s} calls/s`,
);
const c = await toolgate();
console.log(
  `(c) SDK client over HTTP through toolgate:   p50 ${c.p50_ms} ms  p99 ${c.p99_ms} ms  ${c.calls_per_s} calls/s`,
);
const ratio = (x: number, y: number) => Math.round((x / y) * 100) / 100;
const result = {
  bench: 'mcp',
  calls: CALLS,
  direct_stdio: a,
  mcp_proxy_http: b,
  toolgate_http: c,
  ratio_p50_b_to_a: ratio(b.p50_ms, a.p50_ms),
  ratio_p50_c_to_a: ratio(c.p50_ms, a.p50_ms),
  ratio_p99_c_to_a: ratio(c.p99_ms, a.p99_ms),
  ratio_p50_c_to_b: ratio(c.p50_ms, b.p50_ms),
  ratio_p99_c_to_b: ratio(c.p99_ms, b.p99_ms),
  ratio_calls_per_s_c_to_b: ratio(c.calls_per_s, b.calls_per_s),
  goal_c_over_b_p50_le_1: c.p50_ms <= b.p50_ms,
};
console.log(JSON.stringify(result));
