/**
 * MCP clients keep their connection between calls: the SDK transport writes its own
 * `Connection: keep-alive` on event-stream answers, so Node left out `Keep-Alive: timeout=N` and
 * clients closed idle connections after their own default (4 s in undici). A saturated gateway
 * accepts one new connection per event-loop turn, so each call on a new connection could wait
 * unseen in the listen queue (20 s in the load test). The official SDK client over undici, whose
 * idle timeout is set short here so the test need not idle for 4 s.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { Agent, fetch as undiciFetch } from 'undici';
import { buildServer } from '../../src/edge/rest/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { ROOT } from '../support/cli.js';
import { openDemoGateway } from '../support/world.js';

const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123456789';
const _DEMO = readFileSync(join(ROOT, 'demo', 'catalog.yaml'), 'utf8');
const admin = { id: 'test-admin', via: 'library' as const };
/** The client's own idle timeout, used when the server gives no hint. */
const CLIENT_IDLE_MS = 500;

let dir: string;
let tg: Gateway;
let app: FastifyInstance;
let base: string;
let key: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-keep-alive-'));
  tg = await openDemoGateway({ db: `sqlite:${join(dir, 'tg.db')}` }, admin);
  key = (await tg.keys.issue('support-bot', admin)).apiKey;
  app = await buildServer(tg, { adminToken: ADMIN_TOKEN });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});

after(async () => {
  await app.close();
  await tg.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('an MCP client that idles between calls keeps its connection (the server says how long)', async () => {
  const agent = new Agent({ connections: 2, keepAliveTimeout: CLIENT_IDLE_MS });
  let connects = 0;
  agent.on('connect', () => {
    connects += 1;
  });
  const seen: (string | null)[] = [];
  const client = new Client({ name: 'keep-alive-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      fetch: (async (url: string | URL, init?: RequestInit) => {
        const res = await undiciFetch(url, {
          ...(init as Parameters<typeof undiciFetch>[1]),
          dispatcher: agent,
        });
        if (init?.method === 'POST') seen.push(res.headers.get('keep-alive'));
        return res;
      }) as unknown as typeof fetch,
    }),
  );
  try {
    const call = () =>
      client.callTool({
        name: 'get_order',
        arguments: { order_id: 'ORD-004211' },
      }) as Promise<CallToolResult>;
    assert.notEqual((await call()).isError, true);
    const before = connects;
    // Longer than the client's own idle timeout, far shorter than the server's (72 s).
    await sleep(CLIENT_IDLE_MS * 4);
    assert.notEqual((await call()).isError, true);
    assert.equal(connects, before, 'the second call opened a new connection');
    const timeout = Math.floor(app.server.keepAliveTimeout / 1000);
    assert.ok(timeout >= 5, `server keep-alive ${timeout} s`);
    assert.ok(
      seen.every((h) => h === `timeout=${timeout}`),
      `keep-alive hints: ${JSON.stringify(seen)}`,
    );
  } finally {
    await client.close();
    await agent.close();
  }
});

test('a client that asks for Connection: close on /mcp gets its connection closed', async () => {
  const { hostname, port } = new URL(base);
  const res = await new Promise<{ status: number; headers: Record<string, unknown> }>(
    (resolve, reject) => {
      const req = request(
        {
          host: hostname,
          port,
          path: '/mcp',
          method: 'POST',
          headers: { connection: 'close', 'content-type': 'application/json' },
        },
        (r) => {
          r.resume();
          r.on('end', () => resolve({ status: r.statusCode ?? 0, headers: r.headers }));
        },
      );
      req.on('error', reject);
      req.end('{}');
    },
  );
  // No token: refused, and the connection the client wanted closed is closed.
  assert.equal(res.status, 401);
  assert.equal(res.headers.connection, 'close');
  assert.equal(res.headers['keep-alive'], undefined);
});
