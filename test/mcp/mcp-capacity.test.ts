/**
 * Fair sharing of the MCP front's session slots, with the official SDK client: when
 * every slot is taken, the least recently used idle session of the agent holding the most is
 * evicted for a newcomer (its client then gets 404, session gone, and its gate session is closed
 * with an audited event); a session with a call in flight is never evicted, so with none idle the
 * newcomer gets 503 with Retry-After; an agent at its own cap gets 429 with Retry-After.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { ROOT } from '../support/cli.js';
import { approvePendingReviews } from '../support/reviews.js';
import { countedHeldCalls, holdTool } from '../support/tools.js';
import { connectMcp, initializeRequest, openWorld, postMcp, type World } from '../support/world.js';

const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123456789';
const DEMO = readFileSync(join(ROOT, 'demo', 'catalog.yaml'), 'utf8');
const admin = { id: 'test-admin', via: 'library' as const };
const MAX_SESSIONS = 3;

let dir: string;
const clients: Client[] = [];
let world: World;
let tg: Gateway;
let base: string;
let supportKey: string;
let opsKey: string;

const latch = countedHeldCalls();
const { closeLatch, release, arrived } = latch;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-capacity-'));
  world = await openWorld({
    demo: true,
    tools: [holdTool('Wait until the test lets go; used to keep a call in flight.')],
    keys: ['support-bot', 'ops-bot'],
    options: { executor: latch.executor },
    rest: {
      adminToken: ADMIN_TOKEN,
      mcp: { maxSessions: MAX_SESSIONS, maxSessionsPerAgent: MAX_SESSIONS },
    },
  });
  ({ tg, base } = world);
  supportKey = world.keys['support-bot'] ?? '';
  opsKey = world.keys['ops-bot'] ?? '';
});

after(async () => {
  release();
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await world.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

async function connect(token: string): Promise<Client> {
  const client = await connectMcp(base, token, 'capacity-test');
  clients.push(client);
  return client;
}

async function closeAll(list: Client[]) {
  for (const c of list)
    await (c.transport as StreamableHTTPClientTransport).terminateSession().catch(() => {});
}

/** A bare initialize, to read the refusal's status, headers and JSON-RPC error as sent. */
async function initialize(token: string) {
  const res = await postMcp(base, initializeRequest('raw', '1.0.0'), token);
  const text = await res.text();
  return { status: res.status, retryAfter: res.headers.get('retry-after'), text };
}

test('a newcomer takes the least recently used idle session of the agent holding the most', async () => {
  const [s1, s2, s3] = [
    await connect(supportKey),
    await connect(supportKey),
    await connect(supportKey),
  ];
  assert.ok(s1 && s2 && s3);
  // Use them newest-last, so s1 is the least recently used.
  await s1.listTools();
  await s2.listTools();
  await s3.listTools();
  const evictedId = (s1.transport as StreamableHTTPClientTransport).sessionId;

  const ops = await connect(opsKey);
  assert.ok((await ops.listTools()).tools.length > 0, 'the newcomer is served');
  // The evicted session is gone for its client (404 per the MCP transport spec) …
  await assert.rejects(s1.listTools(), /404|session not found/i);
  // … the others are untouched.
  assert.ok((await s2.listTools()).tools.length > 0);
  assert.ok((await s3.listTools()).tools.length > 0);
  assert.ok(evictedId);

  // The gate session behind it is closed, and the eviction is on the audited event record.
  const events = await tg.events.list({ limit: 100 });
  const evicted = events.filter((e) => e.action === 'session.evicted');
  assert.equal(evicted.length, 1);
  const gateSession = evicted[0]?.subject.replace(/^session:/, '') ?? '';
  assert.equal((await tg.sessions.inspect(gateSession)).status, 'closed');
  assert.deepEqual(JSON.parse(evicted[0]?.details ?? '{}'), {
    agent_id: 'support-bot',
    reason: 'mcp.capacity',
  });
  assert.equal(evicted[0]?.actor, 'system:capacity');
  await closeAll([s2, s3, ops]);
});

test('a session with a call in flight is never evicted: with none idle, the newcomer gets 503 and Retry-After', async () => {
  closeLatch();
  latch.recount();
  const busy = [await connect(supportKey), await connect(supportKey), await connect(opsKey)];
  const calls = busy.map((c) => c.callTool({ name: 'hold', arguments: {} }));
  await arrived(3);

  const refused = await initialize(opsKey);
  assert.equal(refused.status, 503);
  assert.equal(refused.retryAfter, '5');
  const error = (JSON.parse(refused.text) as { error: { code: number; data: unknown } }).error;
  assert.equal(error.code, -32063);
  assert.deepEqual(error.data, {
    code: 'OVERLOADED',
    message: `all ${MAX_SESSIONS} MCP sessions are busy; retry later`,
    details: { limit: 'mcp_sessions', max: MAX_SESSIONS, retryAfterSeconds: 5 },
  });
  assert.equal((await fetch(`${base}/healthz`)).status, 200);

  // Once the calls finish, the sessions are idle again and a newcomer gets a slot.
  release();
  for (const result of await Promise.all(calls)) assert.notEqual(result.isError, true);
  for (const c of busy) assert.ok((await c.listTools()).tools.length > 0, 'nobody was evicted');
  const late = await connect(opsKey);
  assert.ok((await late.listTools()).tools.length > 0);
  await closeAll([...busy, late]);
});

test('an agent at its own MCP session cap gets 429 with Retry-After; another agent connects', async () => {
  const held = [await connect(supportKey), await connect(supportKey), await connect(supportKey)];
  const refused = await initialize(supportKey);
  assert.equal(refused.status, 429);
  // As REST and 2026-07-28 say for the same cap (attack round 11 F9): a session is closed, not idled.
  assert.equal(refused.retryAfter, '30');
  const error = (JSON.parse(refused.text) as { error: { code: number; data: unknown } }).error;
  assert.equal(error.code, -32062);
  assert.deepEqual((error.data as { details: unknown }).details, {
    limit: 'sessions_per_agent',
    max: MAX_SESSIONS,
    retryAfterSeconds: 30,
  });
  await closeAll(held.slice(0, 1));
  const ops = await connect(opsKey);
  assert.ok((await ops.listTools()).tools.length > 0);
  await closeAll([...held, ops]);
});

test('the per-agent cap on gate sessions holds for MCP too (REST sessions count)', async () => {
  // A toolgate whose agents may hold 2 gate sessions: one REST session and one MCP session fill it.
  const capped = await openGateway({
    db: `sqlite:${join(dir, 'capped.db')}`,
    caps: { maxSessionsPerAgent: 2 },
  });
  await capped.config.applyText(DEMO, admin);
  await approvePendingReviews(capped);
  const key = (await capped.keys.issue('support-bot', admin)).apiKey;
  const server = await buildServer(capped, { adminToken: ADMIN_TOKEN });
  const url = await server.listen({ host: '127.0.0.1', port: 0 });
  try {
    await capped.sessions.open('support-bot');
    const first = new Client({ name: 'cap', version: '1.0.0' });
    await first.connect(
      new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    const second = new Client({ name: 'cap', version: '1.0.0' });
    await assert.rejects(
      second.connect(
        new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${key}` } },
        }),
      ),
      /429|open sessions/,
    );
    await first.close();
  } finally {
    await server.close();
    await capped.close();
  }
});
