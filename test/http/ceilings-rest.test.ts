/**
 * @module Spend and ceilings as an agent meets them over REST: a real
 * server on loopback, real fetch, a fresh database per backend. Reconnecting, new sessions and new
 * run ids reset no ceiling; a payment is charged against the budget before it runs; bad cost and
 * ceiling configuration is refused whole with a structured error.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import { backends } from '../support/backends.js';
import { paySpec, toolDocument } from '../support/tools.js';
import { openWorld, restClient, type World } from '../support/world.js';

const ADMIN = 'test-admin-token-ceilings-0123456789';

const CONFIG = [
  toolDocument({ id: 'lookup', name: 'lookup', required_capabilities: ['rest:use'] }),
  toolDocument(paySpec('rest:use')),
  {
    apiVersion: 'toolgate/v1',
    kind: 'Agent',
    spec: {
      id: 'rest-bot',
      owner: 'qa',
      budgets: { spend_cents: 100_000 },
      ceilings: {
        windows: [
          { scope: 'agent', window_seconds: 86_400, calls_per_tool: 4, spend_cents: 200_000 },
        ],
      },
    },
  },
  {
    apiVersion: 'toolgate/v1',
    kind: 'Grant',
    spec: { agent: 'rest-bot', capabilities: ['rest:use'] },
  },
];

for (const backend of backends()) {
  describe(`ceilings over REST on ${backend.name}`, () => {
    let world: World;
    let base = '';
    let key = '';

    // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
    const send = restClient<any>(() => base);
    const post = (path: string, body: unknown, token: string) => send('POST', path, body, token);
    const session = async (body: Record<string, unknown> = {}) => {
      const res = await post('/v1/sessions', body, key);
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return String(res.body.id);
    };
    const call = (sid: string, toolName: string, args: unknown) =>
      post(`/v1/sessions/${sid}/calls`, { tool: toolName, arguments: args }, key);

    before(async () => {
      world = await openWorld({
        backend,
        rest: { adminToken: ADMIN },
        options: { executor: demoExecutor().register('t.ok', () => ({ status: 'ok' })) },
      });
      base = world.base;
      const applied = await post('/v1/apply', CONFIG, ADMIN);
      assert.equal(applied.status, 200, JSON.stringify(applied.body));
      key = String((await post('/v1/agents/rest-bot/keys', {}, ADMIN)).body.api_key);
    });
    after(async () => {
      await world?.close();
    });

    test('eight sessions with eight run ids share one ceiling of 4 calls per tool', async () => {
      const statuses: string[] = [];
      for (let i = 0; i < 8; i++) {
        const sid = await session({ run_id: `reconnect-${i}` });
        const res = await call(sid, 'lookup', { invoice: `I-${i}` });
        statuses.push(
          res.status === 200 ? '200' : `${res.status} ${res.body.code} ${res.body.details.rule}`,
        );
      }
      assert.deepEqual(statuses.slice(0, 4), ['200', '200', '200', '200']);
      for (const s of statuses.slice(4)) assert.equal(s, '429 RATE_LIMITED ceiling.calls_per_tool');
    });

    test('under a budget of 1,000.00 a payment of 1,000,000 is refused before it runs and one of 5 runs', async () => {
      const sid = await session();
      const big = await call(sid, 'pay', { amount: 1_000_000 });
      assert.equal(big.status, 429);
      assert.equal(big.body.code, 'BUDGET_EXCEEDED');
      assert.equal(big.body.details.rule, 'budget.spend');
      assert.equal(typeof big.body.message, 'string');
      assert.equal((await call(sid, 'pay', { amount: 5 })).status, 200);
      const odd = await call(sid, 'pay', { amount: 0.001 });
      assert.equal(odd.status, 400);
      assert.equal(odd.body.code, 'INPUT_INVALID');
      assert.equal(odd.body.details.rule, 'cost.invalid');
    });

    test('a cost on an optional argument and a ceiling without a limit are refused whole; nothing changes', async () => {
      const bad = await post(
        '/v1/apply',
        [
          toolDocument({
            id: 'pay2',
            name: 'pay2',
            required_capabilities: ['rest:use'],
            cost: { argument: 'invoice', unit: 'cents' },
          }),
          {
            apiVersion: 'toolgate/v1',
            kind: 'Agent',
            spec: {
              id: 'rest-bot',
              owner: 'qa',
              ceilings: { windows: [{ scope: 'agent', window_seconds: 60 }] },
            },
          },
        ],
        ADMIN,
      );
      assert.equal(bad.status, 422);
      assert.equal(bad.body.code, 'CONFIG_INVALID');
      const pointers = (bad.body.details.problems as { pointer: string }[]).map((p) => p.pointer);
      assert.ok(
        pointers.some((p) => p.startsWith('/0/spec/cost')),
        JSON.stringify(pointers),
      );
      assert.ok(
        pointers.some((p) => p.startsWith('/1/spec/ceilings')),
        JSON.stringify(pointers),
      );
      // The old ceilings still hold: a new session gets no fifth lookup.
      const sid = await session({ run_id: 'after-refusal' });
      assert.equal((await call(sid, 'lookup', { invoice: 'I-x' })).status, 429);
    });
  });
}
