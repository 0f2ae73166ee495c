/** The gate's tool cache: compiled once per version, dropped on change, the policy engine with it. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CedarPolicyEngine, type PolicyEngine } from '../../src/domain/policy/index.js';
import { ToolCache } from '../../src/gate/tool-cache.js';
import { type Harness, openHarness } from './steps/step-harness.js';

let h: Harness;
before(async () => {
  h = await openHarness();
});
after(async () => {
  await h.close();
});

const loaded = CedarPolicyEngine.load([{ id: 'p', text: 'permit (principal, action, resource);' }]);
assert.ok(loaded.ok);
const engine: PolicyEngine = loaded.engine;

test('a version is compiled once and served from the cache until invalidated', async () => {
  const tools = new ToolCache(h.tg.catalog);
  assert.equal(tools.cached('echo', '1.0.0'), undefined);
  const first = await tools.compiled('echo', '1.0.0');
  assert.ok(first);
  assert.equal(tools.cached('echo', '1.0.0'), first);
  assert.equal(await tools.compiled('echo', '1.0.0'), first);
  tools.invalidate();
  assert.equal(tools.cached('echo', '1.0.0'), undefined);
  assert.notEqual(await tools.compiled('echo', '1.0.0'), first);
});

test('a version the catalog does not hold is null, and not cached', async () => {
  const tools = new ToolCache(h.tg.catalog);
  assert.equal(await tools.compiled('echo', '9.9.9'), null);
  assert.equal(tools.cached('echo', '9.9.9'), undefined);
});

test('the policy engine is loaded once, known without an await after that, and dropped with the cache', async () => {
  let loads = 0;
  const tools = new ToolCache(h.tg.catalog, async () => {
    loads += 1;
    return engine;
  });
  assert.equal(tools.loadedPolicyEngine, undefined);
  assert.equal(await tools.policyEngine(), engine);
  assert.equal(tools.loadedPolicyEngine, engine);
  assert.equal(await tools.policyEngine(), engine);
  assert.equal(loads, 1);
  tools.invalidate();
  assert.equal(tools.loadedPolicyEngine, undefined);
  await tools.policyEngine();
  assert.equal(loads, 2);
});

test('without a supplier there are no org policies; a failed load is never taken for none', async () => {
  const none = new ToolCache(h.tg.catalog);
  assert.equal(await none.policyEngine(), null);
  assert.equal(none.loadedPolicyEngine, null);
  const failing = new ToolCache(h.tg.catalog, () => Promise.reject(new Error('down')));
  await assert.rejects(failing.policyEngine());
  assert.equal(failing.loadedPolicyEngine, undefined);
  failing.dropPolicyEngine();
  await assert.rejects(failing.policyEngine());
});
