/** The `policy` step: URL arguments checked and rewritten; org policy decides; unloadable means refused. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CedarPolicyEngine } from '../../../src/domain/policy/index.js';
import { callContextOf } from '../../../src/gate/call-context.js';
import { CallState } from '../../../src/gate/steps/step.js';
import { ToolCache } from '../../../src/gate/tool-cache.js';
import { type Harness, openHarness } from './step-harness.js';

const loaded = CedarPolicyEngine.load([
  {
    id: 'no-usd',
    text: `@id("no-usd") @reason("USD invoices are handled by finance")
forbid (principal, action, resource == Toolgate::Tool::"echo")
when { context.arguments.hasTag("currency") && context.arguments.getTag("currency") == "USD" };`,
  },
]);
assert.ok(loaded.ok);

let h: Harness;
let ctx: { agentId: string; sessionId: string };
let surfer: { agentId: string; sessionId: string };
before(async () => {
  h = await openHarness({ policy: loaded.engine });
  ctx = await h.open();
  surfer = await h.open('surfer');
});
after(async () => {
  await h.close();
});

const policy = (tool: string, args: unknown) =>
  h.at('policy', tool === 'fetch' ? surfer : ctx, tool, args);

test('a URL argument goes on in its checked form and names its destination', async () => {
  const { s, r } = await policy('fetch', { url: 'https://example.com/a/../b' });
  assert.equal(r, undefined);
  assert.equal(s.callArgs.url, 'https://example.com/b');
  assert.deepEqual([...s.destinations], ['example.com']);
});

test('a URL the argument policy refuses is POLICY_DENIED with the pointer', async () => {
  const { r } = await policy('fetch', { url: 'http://127.0.0.1/admin' });
  assert.ok(r?.kind === 'refuse');
  assert.equal(r.code, 'POLICY_DENIED');
  assert.match(r.message, /^\/url: /);
});

test('an org policy forbids one argument value and allows its neighbour', async () => {
  const denied = await policy('echo', { invoice: 'I-1', currency: 'USD' });
  assert.ok(denied.r?.kind === 'refuse');
  assert.equal(denied.r.rule, 'cedar.no-usd');
  assert.equal(denied.r.message, 'USD invoices are handled by finance');
  assert.equal((await policy('echo', { invoice: 'I-1', currency: 'EUR' })).r, undefined);
});

test('policies that cannot be loaded refuse the call (fail closed), and are tried again', async () => {
  let attempts = 0;
  const deps = {
    ...h.deps,
    tools: new ToolCache(h.tg.catalog, () => {
      attempts += 1;
      return Promise.reject(new Error('store down'));
    }),
  };
  for (const _ of [1, 2]) {
    const s = await h.before(
      new CallState(deps, callContextOf(ctx), 'echo', { invoice: 'I-1' }, {}, 'call_p', 0),
      'policy',
    );
    const r = await h.step(s, 'policy');
    assert.ok(r?.kind === 'refuse');
    assert.equal(r.rule, 'cedar.unavailable');
  }
  assert.equal(attempts, 2);
});
