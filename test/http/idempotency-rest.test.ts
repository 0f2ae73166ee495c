/**
 * @module Idempotency keys as an agent meets them over REST, on every backend: a call refused by a
 * rate limit or a budget (or withdrawn before its tool started) holds no key, so the same key runs
 * once the call may; a call that ran and failed is answered with the same failure and never runs
 * again; the gateway never tells a caller to use a new key; and the key's owner — only its owner —
 * can ask what became of the call (`GET /v1/sessions/:id/idempotency/:key`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { paySpec, toolDocument } from '../support/tools.js';
import { openWorld, restClient, type World } from '../support/world.js';

const ADMIN = 'test-admin-token-idempotency-0123456789';

const CONFIG = [
  toolDocument({
    id: 'limited',
    name: 'limited',
    required_capabilities: ['idem:use'],
    rate_limit: { per_run: 1 },
    runtime: { kind: 'inline', handler: 't.count' },
  }),
  toolDocument({ ...paySpec('idem:use'), runtime: { kind: 'inline', handler: 't.count' } }),
  toolDocument({
    id: 'flaky',
    name: 'flaky',
    required_capabilities: ['idem:use'],
    runtime: { kind: 'inline', handler: 't.fail' },
  }),
  toolDocument({
    id: 'slow',
    name: 'slow',
    required_capabilities: ['idem:use'],
    runtime: { kind: 'inline', handler: 't.slow' },
  }),
  ...['idem-bot', 'other-bot'].flatMap((id) => [
    {
      apiVersion: 'toolgate/v1',
      kind: 'Agent',
      spec: { id, owner: 'qa', budgets: { spend_cents: 10_000 } },
    },
    { apiVersion: 'toolgate/v1', kind: 'Grant', spec: { agent: id, capabilities: ['idem:use'] } },
  ]),
];

for (const backend of backends()) {
  describe(`idempotency keys over REST on ${backend.name}`, () => {
    let world: World;
    let tg: Gateway;
    let base = '';
    let key = '';
    let otherKey = '';
    const ran = { count: 0, fail: 0 };
    let release: () => void = () => {};
    let slowStarted: () => void = () => {};

    // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
    const rest = restClient<any>(() => base);
    const send = (method: string, path: string, body: unknown, token: string) =>
      rest(method, path, body, token);
    const session = async (token = key, body: Record<string, unknown> = {}) => {
      const res = await send('POST', '/v1/sessions', body, token);
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return String(res.body.id);
    };
    const call = (sid: string, name: string, args: unknown, idem: string, token = key) =>
      send(
        'POST',
        `/v1/sessions/${sid}/calls`,
        { tool: name, arguments: args, idempotency_key: idem },
        token,
      );
    const outcome = (sid: string, name: string, idem: string, token = key) =>
      send('GET', `/v1/sessions/${sid}/idempotency/${idem}?tool=${name}`, undefined, token);

    before(async () => {
      world = await openWorld({
        backend,
        rest: { adminToken: ADMIN },
        options: {
          executor: demoExecutor()
            .register('t.ok', () => ({ status: 'ok' }))
            .register('t.count', () => {
              ran.count += 1;
              return { status: `run ${ran.count}` };
            })
            .register('t.fail', () => {
              ran.fail += 1;
              throw new Error('the upstream broke after sending');
            })
            .register('t.slow', async () => {
              slowStarted();
              await new Promise<void>((resolve) => {
                release = resolve;
              });
              return { status: 'slow done' };
            }),
        },
      });
      ({ tg, base } = world);
      const applied = await send('POST', '/v1/apply', CONFIG, ADMIN);
      assert.equal(applied.status, 200, JSON.stringify(applied.body));
      key = String((await send('POST', '/v1/agents/idem-bot/keys', {}, ADMIN)).body.api_key);
      otherKey = String((await send('POST', '/v1/agents/other-bot/keys', {}, ADMIN)).body.api_key);
    });
    after(async () => {
      release();
      await world?.close();
    });

    test("another API key of the same agent never meets the first key's record: its call runs, and the owner's replay stays the owner's", async () => {
      // Attack round 8 F5: a key and its stored output were shared by every credential of the agent.
      const secondKey = String(
        (await send('POST', '/v1/agents/idem-bot/keys', {}, ADMIN)).body.api_key,
      );
      const mine = await session(key);
      const first = await call(mine, 'pay', { amount: 1 }, 'per-credential');
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const countAfterFirst = ran.count;
      // The benign neighbour: the same credential's retry is the replay, running nothing.
      const replay = await call(mine, 'pay', { amount: 1 }, 'per-credential');
      assert.equal(replay.body.call_id, first.body.call_id);
      assert.equal(ran.count, countAfterFirst);
      // The other credential: its own record, its own call; the first's output is not its to read.
      const theirs = await session(secondKey);
      const asked = await outcome(theirs, 'pay', 'per-credential', secondKey);
      assert.equal(asked.body.code, 'IDEMPOTENCY_KEY_NOT_FOUND', JSON.stringify(asked.body));
      const runs = await call(theirs, 'pay', { amount: 1 }, 'per-credential', secondKey);
      assert.equal(runs.status, 200, JSON.stringify(runs.body));
      assert.notEqual(runs.body.call_id, first.body.call_id);
      assert.equal(ran.count, countAfterFirst + 1);
    });

    test('a call refused by a rate limit holds no key: the same key runs once the limit allows it, then replays', async () => {
      const first = await session(key, { run_id: 'limit-run-1' });
      assert.equal((await call(first, 'limited', { invoice: 'I-0' }, 'lim-0')).status, 200);
      const before = ran.count;
      const refused = await call(first, 'limited', { invoice: 'I-1' }, 'lim-1');
      assert.equal(refused.status, 429, JSON.stringify(refused.body));
      assert.equal(refused.body.code, 'RATE_LIMITED');
      // The refused call is not "in progress": asked again it is refused by the limit, not the key.
      const again = await call(first, 'limited', { invoice: 'I-1' }, 'lim-1');
      assert.equal(again.body.code, 'RATE_LIMITED', JSON.stringify(again.body));
      assert.equal(
        (await outcome(first, 'limited', 'lim-1')).body.code,
        'IDEMPOTENCY_KEY_NOT_FOUND',
      );

      const second = await session(key, { run_id: 'limit-run-2' });
      const runs = await call(second, 'limited', { invoice: 'I-1' }, 'lim-1');
      assert.equal(runs.status, 200, JSON.stringify(runs.body));
      assert.equal(ran.count, before + 1, 'ran once the limit allowed it');
      // The benign neighbour: a call that ran holds its key; a retry is its replay.
      const replay = await call(second, 'limited', { invoice: 'I-1' }, 'lim-1');
      assert.equal(replay.status, 200);
      assert.equal(replay.body.call_id, runs.body.call_id);
      assert.equal(ran.count, before + 1, 'the replay ran nothing');
      const known = await outcome(second, 'limited', 'lim-1');
      assert.equal(known.status, 200, JSON.stringify(known.body));
      assert.equal(known.body.state, 'succeeded');
      assert.equal(known.body.call_id, runs.body.call_id);
      assert.deepEqual(known.body.output, runs.body.output);
    });

    test('a call refused by a budget holds no key: retried it meets the budget again, not the key', async () => {
      const sid = await session();
      const before = ran.count;
      const big = await call(sid, 'pay', { amount: 1_000 }, 'pay-big');
      assert.equal(big.status, 429, JSON.stringify(big.body));
      assert.equal(big.body.code, 'BUDGET_EXCEEDED');
      const again = await call(sid, 'pay', { amount: 1_000 }, 'pay-big');
      assert.equal(again.body.code, 'BUDGET_EXCEEDED', JSON.stringify(again.body));
      assert.equal((await outcome(sid, 'pay', 'pay-big')).status, 404);
      const small = await call(sid, 'pay', { amount: 5 }, 'pay-small');
      assert.equal(small.status, 200, JSON.stringify(small.body));
      assert.equal(ran.count, before + 1);
    });

    test('a call withdrawn before its tool started holds no key (library)', async () => {
      const sid = await session();
      const principal = (await tg.agent.authenticate(key)) ?? assert.fail('the key authenticates');
      const who = { principal, sessionId: sid };
      const before = ran.count;
      const withdrawn = await tg.agent.invoke(
        who,
        'pay',
        { amount: 1 },
        { idempotencyKey: 'withdrawn-1', signal: AbortSignal.abort() },
      );
      assert.equal(withdrawn.kind === 'deny' ? withdrawn.code : withdrawn.kind, 'CALL_CANCELLED');
      assert.equal(ran.count, before, 'nothing ran');
      assert.equal((await outcome(sid, 'pay', 'withdrawn-1')).status, 404);
      const runs = await tg.agent.invoke(
        who,
        'pay',
        { amount: 1 },
        { idempotencyKey: 'withdrawn-1' },
      );
      assert.equal(runs.kind, 'allow', JSON.stringify(runs));
      assert.equal(ran.count, before + 1);
    });

    test('a call that ran and failed is answered with the same failure under its key, never run again', async () => {
      const sid = await session();
      const failed = await call(sid, 'flaky', { invoice: 'F-1' }, 'flaky-1');
      assert.equal(failed.body.code, 'EXECUTION_FAILED', JSON.stringify(failed.body));
      assert.equal(ran.fail, 1);
      const again = await call(sid, 'flaky', { invoice: 'F-1' }, 'flaky-1');
      assert.equal(again.body.code, 'EXECUTION_FAILED');
      assert.equal(again.body.details.rule, failed.body.details.rule);
      assert.equal(again.body.details.call_id, failed.body.details.call_id, 'the first call');
      assert.equal(ran.fail, 1, 'not run a second time');
      const told = await outcome(sid, 'flaky', 'flaky-1');
      assert.equal(told.body.state, 'failed', JSON.stringify(told.body));
      assert.equal(told.body.error.code, 'EXECUTION_FAILED');
      assert.equal(told.body.call_id, failed.body.details.call_id);
    });

    test('while the first call runs, a retry is told to wait, never to use a new key; only the owner sees the outcome', async () => {
      const sid = await session();
      const started = new Promise<void>((resolve) => {
        slowStarted = resolve;
      });
      const first = call(sid, 'slow', { invoice: 'S-1' }, 'slow-1');
      await started;
      const retry = await call(sid, 'slow', { invoice: 'S-1' }, 'slow-1');
      assert.equal(retry.status, 409, JSON.stringify(retry.body));
      assert.equal(retry.body.code, 'IDEMPOTENCY_CONFLICT');
      assert.equal(retry.body.details.rule, 'idempotency.in_progress');
      assert.doesNotMatch(retry.body.message, /use a new key/i);
      const running = await outcome(sid, 'slow', 'slow-1');
      assert.equal(running.status, 200);
      assert.equal(running.body.state, 'running');

      // Another principal asking for the same key and tool gets what an unknown key gets.
      const foreign = await outcome(await session(otherKey), 'slow', 'slow-1', otherKey);
      const unknown = await outcome(sid, 'slow', 'never-used');
      assert.equal(foreign.status, 404);
      assert.equal(unknown.status, 404);
      assert.equal(foreign.body.code, 'IDEMPOTENCY_KEY_NOT_FOUND');
      assert.equal(foreign.body.message, unknown.body.message);
      assert.deepEqual(Object.keys(foreign.body.details).sort(), ['idempotencyKey', 'tool']);
      // A tool outside the caller's set is the same answer too, and another session's id is not.
      assert.equal(
        (await outcome(sid, 'grant_role', 'slow-1')).body.code,
        'IDEMPOTENCY_KEY_NOT_FOUND',
      );
      assert.equal((await outcome(sid, 'slow', 'slow-1', otherKey)).body.code, 'SESSION_NOT_FOUND');
      assert.equal((await outcome(sid, 'slow', 'bad key!')).status, 400);

      release();
      const done = await first;
      assert.equal(done.status, 200, JSON.stringify(done.body));
      const finished = await outcome(sid, 'slow', 'slow-1');
      assert.equal(finished.body.state, 'succeeded');
      assert.deepEqual(finished.body.output, { status: 'slow done' });
      assert.equal(typeof finished.body.trust, 'object', 'the stored result keeps its trust label');
    });
  });
}
