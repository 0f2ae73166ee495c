/**
 * Admission control of the HTTP port, against a real listening server: a bounded
 * number of requests run, a bounded queue waits a bounded time, and everything past that is
 * answered at once with 503/429, Retry-After and the structured error; one caller cannot take all
 * the slots; /healthz answers throughout. Requests are held in flight by a built-in tool that
 * waits on a latch the test opens, so nothing depends on timing luck.
 */
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Admission } from '../../src/edge/rest/admission.js';
import { countedHeldCalls, holdCall, holdTool, restSession } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';

const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123456789';
const QUEUE_WAIT_MS = 400;

let world: World;
let app: FastifyInstance;
let base: string;
let keys: Record<string, string> = {};

/** Calls of the `hold` tool wait here until the test releases them; `latch.entered()` counts arrivals. */
const latch = countedHeldCalls();
const { closeLatch, release, arrived } = latch;

before(async () => {
  world = await openWorld({
    demo: true,
    tools: [holdTool(undefined, { n: { type: 'integer' } })],
    agents: ['a-bot', 'b-bot', 'c-bot', 'd-bot'].map((id) => ({
      id,
      display_name: id,
      capabilities: ['docs:read'],
    })),
    options: { executor: latch.executor },
    rest: {
      adminToken: ADMIN_TOKEN,
      admission: {
        maxInFlight: 2,
        maxInFlightPerCaller: 1,
        maxQueued: 1,
        maxQueueWaitMs: QUEUE_WAIT_MS,
        // The event-loop watch has its own test below; here only the counts may refuse.
        maxEventLoopDelayMs: 0,
      },
    },
  });
  ({ base, keys } = world);
  app = world.app as FastifyInstance;
});

after(async () => {
  release();
  await world.close();
});

const session = (agent: string) => restSession(base, String(keys[agent]));
const hold = (agent: string, sessionId: string) => holdCall(base, String(keys[agent]), sessionId);

/** Sessions of a-, b- and c-bot, with a's and b's calls held in the two slots. */
async function bothSlotsHeld() {
  const a = await session('a-bot');
  const b = await session('b-bot');
  const c = await session('c-bot');
  closeLatch();
  latch.recount();
  const first = hold('a-bot', a);
  const second = hold('b-bot', b);
  await arrived(2);
  return { c, first, second };
}

async function refusal(res: Response) {
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: (await res.json()) as { code: string; message: string; details: unknown },
  };
}

test('past its share one caller gets 429 at once; past capacity and queue, 503 at once; probes answer', async () => {
  const sessions = {
    a: await session('a-bot'),
    b: await session('b-bot'),
    c: await session('c-bot'),
    d: await session('d-bot'),
  };
  closeLatch();
  latch.recount();
  const first = hold('a-bot', sessions.a);
  await arrived(1);

  // Attack: a second request of a caller already holding its one slot is refused while the first
  // is still held: it never waited for it.
  const greedy = await refusal(await hold('a-bot', sessions.a));
  assert.equal(latch.entered(), 1, 'the refused request never reached the tool');
  assert.deepEqual(greedy, {
    status: 429,
    retryAfter: '1',
    body: {
      code: 'LIMIT_REACHED',
      message: greedy.body.message,
      details: { limit: 'in_flight_per_caller', max: 1, retryAfterSeconds: 1 },
    },
  });

  // Benign neighbour: another agent still gets the second slot.
  const second = hold('b-bot', sessions.b);
  await arrived(2);

  // Capacity is full: one more waits in the queue, and the one after it finds the queue full.
  const queuedAt = Date.now();
  const queued = hold('c-bot', sessions.c);
  const overflow = await refusal(await hold('d-bot', sessions.d));
  assert.equal(overflow.status, 503);
  assert.equal(overflow.retryAfter, '1');
  assert.equal(overflow.body.code, 'OVERLOADED');
  assert.deepEqual(overflow.body.details, { limit: 'queue', max: 1, retryAfterSeconds: 1 });

  // Probes are never queued.
  const health = await fetch(`${base}/healthz`);
  assert.equal(health.status, 200);
  assert.equal((await fetch(`${base}/readyz`)).status, 200);

  // The queued request is answered 503 once its bounded wait is over, not held for ever.
  const timedOut = await refusal(await queued);
  const waited = Date.now() - queuedAt;
  assert.equal(timedOut.status, 503);
  assert.equal(timedOut.body.code, 'OVERLOADED');
  assert.deepEqual(timedOut.body.details, { limit: 'in_flight', max: 2, retryAfterSeconds: 1 });
  assert.ok(waited >= QUEUE_WAIT_MS - 5, `answered after ${waited} ms, before its wait was over`);
  assert.equal(latch.entered(), 2, 'nothing refused reached the tool');

  release();
  assert.equal((await first).status, 200);
  assert.equal((await second).status, 200);
  // Slots come back when responses finish: everyone is served again.
  closeLatch();
  release();
  for (const [agent, id] of Object.entries(sessions))
    assert.equal((await hold(`${agent}-bot`, id)).status, 200, `${agent}-bot is served again`);
});

test('a queued request takes the first slot that frees, in order', async () => {
  const { c, first, second } = await bothSlotsHeld();
  const queued = hold('c-bot', c);
  // Let the held calls finish: the queued one is admitted and runs (with the latch open).
  release();
  assert.equal((await first).status, 200);
  assert.equal((await second).status, 200);
  assert.equal((await queued).status, 200);
  assert.equal(latch.entered(), 3);
});

test('a client that gives up while queued frees its place', async () => {
  const { c, first, second } = await bothSlotsHeld();
  // The client leaves once the server has its request (queued behind the two held calls), and
  // the server has seen the connection close before a slot frees.
  const seen = new Promise<ServerResponse>((r) =>
    app.server.once('request', (_req: IncomingMessage, res: ServerResponse) => r(res)),
  );
  const body = JSON.stringify({ tool: 'hold', arguments: {} });
  const abandoned = httpRequest(`${base}/v1/sessions/${c}/calls`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${keys['c-bot']}`,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    },
  });
  abandoned.on('error', () => {});
  abandoned.end(body);
  const res = await seen;
  const closed = new Promise((r) => res.once('close', r));
  abandoned.destroy();
  await closed;
  release();
  await first;
  await second;
  // The caller's share is whole again: one request of it runs at once.
  assert.equal((await hold('c-bot', c)).status, 200);
});

test('a lagging event loop refuses new requests at once until it recovers', async () => {
  const admission = new Admission({
    maxInFlight: 10,
    maxInFlightPerCaller: 10,
    maxQueued: 10,
    maxQueueWaitMs: 1000,
    maxEventLoopDelayMs: 50,
  });
  try {
    const idle = await admission.enter('caller');
    assert.equal(idle.ok, true);
    if (idle.ok) idle.release();
    // Keep the loop busy in 120 ms slices until the watch has seen two windows over 50 ms.
    for (let i = 0; i < 200 && !admission.lagging; i++) {
      const until = Date.now() + 120;
      while (Date.now() < until) {}
      await new Promise((r) => setTimeout(r, 0));
    }
    assert.equal(admission.lagging, true);
    const refused = await admission.enter('caller');
    assert.equal(refused.ok, false);
    if (!refused.ok) {
      assert.equal(refused.error.code, 'OVERLOADED');
      assert.deepEqual(refused.error.details, {
        limit: 'event_loop',
        max: 50,
        retryAfterSeconds: 1,
      });
    }
    // An idle loop lifts the refusal.
    for (let i = 0; i < 200 && admission.lagging; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(admission.lagging, false);
    const again = await admission.enter('caller');
    assert.equal(again.ok, true);
    if (again.ok) again.release();
  } finally {
    admission.stop();
  }
});
