/**
 * Standing streams and shares are bounded per principal, not per credential string, and hold no
 * request slot (docs/security-model.md "Shared slots, streams and breakers"), against a real
 * listening server: one agent with four API keys opens MCP 2026-07-28 `subscriptions/listen`
 * streams and a 2025-era session's GET stream — past its agent's bound it is refused (429), and
 * while its streams stand another agent's calls (the official SDK client) run, as do the console,
 * an admin route and the probes; four keys of one agent share one share of running requests; a
 * full agents' lane leaves the operators' lane free. Requests are held in flight by a built-in
 * tool that waits on a latch the test opens, so nothing depends on timing luck.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { countedHeldCalls, holdCall, holdTool, restSession } from '../support/tools.js';
import {
  initializeRequest,
  mcpHeaders,
  openWorld,
  postListen,
  postMcp,
  type World,
} from '../support/world.js';

const ADMIN_TOKEN = 'standing-test-admin-token-0123456789abcdef';
const admin = { id: 'test-admin', via: 'library' as const };
const STREAMS_PER_AGENT = 3;

let world: World;
let base: string;
const keys: Record<string, string[]> = {};
const clients: Client[] = [];
const open: ReadableStreamDefaultReader<Uint8Array>[] = [];

const latch = countedHeldCalls();
const { closeLatch, release, arrived } = latch;

before(async () => {
  world = await openWorld({
    demo: true,
    tools: [holdTool()],
    agents: [
      { id: 'mallory', display_name: 'mallory', capabilities: ['docs:read'] },
      { id: 'alice', display_name: 'alice', capabilities: ['docs:read'] },
    ],
    keys: ['support-bot'],
    options: { executor: latch.executor },
    rest: {
      adminToken: ADMIN_TOKEN,
      admission: {
        maxInFlight: 4,
        maxInFlightPerCaller: 2,
        maxQueued: 1,
        maxQueueWaitMs: 300,
        maxEventLoopDelayMs: 0,
      },
      standing: {
        streams: { max: 16, maxPerAgent: STREAMS_PER_AGENT, maxPerUser: 16 },
        waits: { max: 16, maxPerAgent: 1, maxPerUser: 16 },
      },
    },
  });
  const { tg } = world;
  base = world.base;
  keys.mallory = [world.keys.mallory ?? ''];
  for (let i = 1; i < 4; i++) keys.mallory.push((await tg.keys.issue('mallory', admin)).apiKey);
  keys.alice = [world.keys.alice ?? ''];
  keys.support = [world.keys['support-bot'] ?? ''];
});

after(async () => {
  release();
  await closeStreams();
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await world.close();
});

async function closeStreams() {
  for (const r of open.splice(0)) await r.cancel().catch(() => {});
}

const mallory = (i: number) => keys.mallory?.[i] ?? '';
const alice = () => keys.alice?.[0] ?? '';

/** Reads a stream until `until` matches what it sent (bounded: the stream is live). */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, until: RegExp) {
  const decoder = new TextDecoder();
  let text = '';
  while (!until.test(text)) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += decoder.decode(chunk.value);
  }
  assert.match(text, until);
}

/** A 2026-07-28 `subscriptions/listen`: the open stream (acknowledged), or the refusal. */
async function listen(token: string) {
  const res = await postListen(base, token);
  if (res.status !== 200 || !res.body) {
    return { status: res.status, body: (await res.json()) as { error: { data: unknown } } };
  }
  const reader = res.body.getReader();
  open.push(reader);
  await readUntil(reader, /acknowledged/);
  return { status: 200, body: null };
}

/** A 2025-era session opened by hand, then its GET stream: open, or the refusal. */
async function sessionStream(token: string) {
  const headers = mcpHeaders(token);
  const init = await postMcp(base, initializeRequest('raw', '1.0.0'), token);
  assert.equal(init.status, 200);
  await init.text();
  const id = init.headers.get('mcp-session-id') ?? '';
  const session = { ...headers, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' };
  const done = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: session,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  assert.equal(done.status, 202);
  const res = await fetch(`${base}/mcp`, {
    method: 'GET',
    headers: { ...session, accept: 'text/event-stream' },
  });
  if (res.status !== 200 || !res.body)
    return { status: res.status, body: (await res.json()) as { error: { data: unknown } } };
  open.push(res.body.getReader());
  return { status: 200, body: null };
}

async function connect(
  token: string,
  setup: (client: Client) => void = () => {},
  capabilities: Record<string, unknown> = {},
): Promise<Client> {
  const client = new Client({ name: 'standing-test', version: '1.0.0' }, { capabilities });
  setup(client);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

const openSession = (token: string) => restSession(base, token);
const hold = (token: string, sessionId: string) => holdCall(base, token, sessionId);

/** The console, an admin route and the probes: none of them may be starved by agents. */
async function operatorsServed() {
  assert.equal((await fetch(`${base}/console/login`)).status, 200, 'the console answers');
  const tools = await fetch(`${base}/v1/tools`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  assert.equal(tools.status, 200, 'an admin route answers');
  assert.equal((await fetch(`${base}/healthz`)).status, 200);
  assert.equal((await fetch(`${base}/readyz`)).status, 200);
}

test('listen streams of one agent over four keys hold no request slot and are bounded per agent', async () => {
  // Attack: one agent, four credentials, more standing streams than its bound (and than slots).
  for (let i = 0; i < STREAMS_PER_AGENT; i++)
    assert.equal((await listen(mallory(i))).status, 200, `stream ${i} opens`);
  const refused = await listen(mallory(3));
  assert.equal(refused.status, 429);
  assert.deepEqual(refused.body?.error.data, {
    code: 'LIMIT_REACHED',
    message: ((refused.body?.error.data ?? {}) as { message?: string }).message,
    details: { limit: 'streams_per_agent', max: STREAMS_PER_AGENT, retryAfterSeconds: 5 },
  });
  // Benign neighbours, while the streams stand: another agent's listen stream and its calls
  // through the SDK client, and every operator-facing endpoint.
  assert.equal((await listen(alice())).status, 200);
  const client = await connect(alice());
  for (let i = 0; i < 6; i++) {
    const result = await client.callTool({ name: 'hold', arguments: {} });
    assert.notEqual(result.isError, true, JSON.stringify(result));
  }
  await operatorsServed();
  // A stream closed is a place given back.
  await closeStreams();
  for (let i = 0; i < 200 && (await listen(mallory(3))).status !== 200; i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
  await closeStreams();
});

test("a 2025-era session's GET stream is a stream of its agent too, bounded and slot-free", async () => {
  for (let i = 0; i < STREAMS_PER_AGENT; i++)
    assert.equal((await sessionStream(mallory(i))).status, 200, `stream ${i} opens`);
  const refused = await sessionStream(mallory(3));
  assert.equal(refused.status, 429);
  assert.deepEqual(((refused.body?.error.data ?? {}) as { details?: unknown }).details, {
    limit: 'streams_per_agent',
    max: STREAMS_PER_AGENT,
    retryAfterSeconds: 5,
  });
  const client = await connect(alice());
  assert.ok((await client.listTools()).tools.length > 0);
  await operatorsServed();
  await closeStreams();
});

test("four keys of one agent share one share of running requests; another agent's run", async () => {
  const sessions = [0, 1, 2].map(async (i) => openSession(mallory(i)));
  const [s0, s1, s2] = await Promise.all(sessions);
  const a = await openSession(alice());
  closeLatch();
  latch.recount();
  const first = hold(mallory(0), s0 ?? '');
  const second = hold(mallory(1), s1 ?? '');
  await arrived(2);
  // Attack: a third credential of the same agent, while its share (2) is running.
  const third = await hold(mallory(2), s2 ?? '');
  assert.equal(third.status, 429);
  assert.equal(third.headers.get('retry-after'), '1');
  const body = (await third.json()) as { code: string; details: unknown };
  assert.equal(body.code, 'LIMIT_REACHED');
  assert.deepEqual(body.details, { limit: 'in_flight_per_agent', max: 2, retryAfterSeconds: 1 });
  assert.equal(latch.entered(), 2, 'the refused call never reached the tool');
  // Benign neighbour: another agent's call runs beside them.
  const theirs = hold(alice(), a);
  await arrived(3);
  release();
  for (const res of [await first, await second, await theirs]) assert.equal(res.status, 200);
  // Shares come back when responses finish.
  assert.equal((await hold(mallory(2), s2 ?? '')).status, 200);
});

test("a full agents' lane leaves the console, admin routes and probes their own", async () => {
  const ids = await Promise.all([0, 1].map((i) => openSession(mallory(i))));
  const a = await openSession(alice());
  const b = await openSession(alice());
  closeLatch();
  latch.recount();
  const held = [
    hold(mallory(0), ids[0] ?? ''),
    hold(mallory(1), ids[1] ?? ''),
    hold(alice(), a),
    hold(alice(), b),
  ];
  await arrived(4);
  // Every agents' slot is taken and the one queue place is the next agent request's.
  const queued = fetch(`${base}/v1/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${mallory(2)}`, 'content-type': 'application/json' },
    body: '{}',
  });
  let overflow: Response | null = null;
  for (let i = 0; i < 200; i++) {
    overflow = await fetch(`${base}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${mallory(3)}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const details = ((await overflow.json()) as { details?: { limit?: string } }).details;
    if (overflow.status === 503 && details?.limit === 'queue') break;
  }
  assert.equal(overflow?.status, 503, "the agents' lane is full");
  // The operators' lane is not: the console, an admin route and the probes answer at once.
  await operatorsServed();
  release();
  for (const res of held) assert.equal((await res).status, 200);
  await (await queued).text();
});

test('a call waiting for the person at the client holds no request slot; waits are bounded per agent', async () => {
  const key = keys.support?.[0] ?? '';
  let shown = 0;
  let answer: (a: { action: 'decline' }) => void = () => {};
  const answered = new Promise<{ action: 'decline' }>((r) => {
    answer = r;
  });
  const asked: (() => void)[] = [];
  const elicits = (c: Client) =>
    c.setRequestHandler(ElicitRequestSchema, async () => {
      shown += 1;
      for (const r of asked.splice(0)) r();
      return answered;
    });
  const waiting = await connect(key, elicits, { elicitation: { form: {} } });
  const args = { to: 'ben@customer.example', subject: 'Order update', body: 'Shipped today.' };
  const first = waiting.callTool({ name: 'send_email', arguments: args });
  while (shown < 1) await new Promise<void>((r) => asked.push(r));
  // While the person decides, the agent's share of running requests is whole: two calls run.
  const sessionIds = await Promise.all([openSession(key), openSession(key)]);
  closeLatch();
  latch.recount();
  const held = sessionIds.map((id) => hold(key, id));
  await arrived(2);
  release();
  for (const res of held) assert.equal((await res).status, 200, 'the waiting call held no slot');
  // Attack: a second wait of the same agent past its bound is not asked; the call stays pending.
  const second = await connect(key, elicits, { elicitation: { form: {} } });
  const refused = (await second.callTool({
    name: 'send_email',
    arguments: { ...args, subject: 'Another update' },
  })) as CallToolResult;
  const decision = (refused._meta?.['toolgate/decision'] ?? {}) as { kind?: string };
  assert.equal(decision.kind, 'pending_approval');
  assert.equal(shown, 1, 'the person was not asked a second time');
  // The first wait ends as the person answers; its call comes back as work and answers.
  answer({ action: 'decline' });
  const done = (await first) as CallToolResult;
  assert.equal(
    ((done._meta?.['toolgate/decision'] ?? {}) as { kind?: string }).kind,
    'pending_approval',
  );
});
