/**
 * Admin control of tool health (C14) over REST and the CLI: an override needs a state, a reason
 * and an expiry in the future (anything else is INPUT_INVALID and changes nothing), holds the
 * tool unavailable (its calls fail fast) until cleared, and both set and clear are audited with
 * who and why. Only an admin may change it; an agent key or no token may not.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { InlineExecutor } from '../../src/execution/runtimes/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { ensureBuilt, runCli } from '../support/cli.js';
import { validTool } from '../support/tools.js';
import { openWorld, restClient, type World } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const ADMIN_TOKEN = 'health-admin-token-0123456789abcdef';
let dir: string;
let world: World;
let tg: Gateway;
let base: string;

const lookup = validTool({
  data_access: 'public',
  runtime: { kind: 'inline', handler: 'test.lookup_invoice' },
});

before(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-health-admin-'));
  world = await openWorld({
    actor: admin,
    tools: [lookup],
    agents: [{ id: 'reader', capabilities: ['billing:read'], key: false }],
    options: {
      db: `sqlite:${join(dir, 'tg.db')}`,
      executor: new InlineExecutor().register('test.lookup_invoice', async () => ({
        status: 'paid',
      })),
    },
    rest: { adminToken: ADMIN_TOKEN },
  });
  ({ tg, base } = world);
  await tg.health.sync();
});

after(async () => {
  await world.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

const call = restClient(() => base, ADMIN_TOKEN);

const OVERRIDE = '/v1/tools/lookup_invoice/versions/1.0.0/health/override';
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();

test('REST: a bad override is refused whole and changes nothing; no token is 401', async () => {
  const past = await call('PUT', OVERRIDE, {
    state: 'unavailable',
    reason: 'maintenance',
    expires_at: new Date(Date.now() - 1000).toISOString(),
  });
  assert.equal(past.status, 400);
  assert.equal(past.body.code, 'INPUT_INVALID');
  const noReason = await call('PUT', OVERRIDE, { state: 'unavailable', expires_at: inAnHour() });
  assert.equal(noReason.status, 400);
  const anonymous = await call(
    'PUT',
    OVERRIDE,
    { state: 'unavailable', reason: 'x', expires_at: inAnHour() },
    '',
  );
  assert.equal(anonymous.status, 401);
  const unknown = await call('PUT', '/v1/tools/nope/versions/1.0.0/health/override', {
    state: 'unavailable',
    reason: 'x',
    expires_at: inAnHour(),
  });
  assert.equal(unknown.status, 404);
  const status = await call('GET', '/v1/tools/lookup_invoice/versions/1.0.0/health');
  assert.equal(status.status, 200);
  assert.equal(status.body.override, null);
  assert.equal(status.body.state, 'unchecked');
  assert.equal(status.body.score, 0);
});

test('REST: an override holds the tool unavailable until cleared, audited with who and why', async () => {
  const s = await tg.sessions.open('reader');
  const ctx = { agentId: 'reader', sessionId: s.id };
  assert.equal((await tg.gate.invoke(ctx, 'lookup_invoice', { invoice: 'INV-1' })).kind, 'allow');
  const set = await call('PUT', OVERRIDE, {
    state: 'unavailable',
    reason: 'billing API maintenance',
    expires_at: inAnHour(),
  });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  assert.equal(set.body.state, 'unavailable');
  const refused = await tg.gate.invoke(ctx, 'lookup_invoice', { invoice: 'INV-1' });
  assert.equal(
    refused.kind === 'deny' && `${refused.code}/${refused.rule}`,
    'TOOL_UNAVAILABLE/health.override',
  );
  const listed = await call('GET', '/v1/health/tools?state=unavailable');
  assert.deepEqual(
    (listed.body.tools as { tool_id: string }[]).map((t) => t.tool_id),
    ['lookup_invoice'],
  );
  const coverage = await call('GET', '/v1/health/coverage');
  assert.equal(coverage.status, 200);
  assert.equal(coverage.body.ratio, 1);
  const cleared = await call('DELETE', `${OVERRIDE}?reason=done`);
  assert.equal(cleared.status, 200);
  const again = await call('DELETE', OVERRIDE);
  assert.equal(again.status, 404);
  assert.equal(again.body.code, 'HEALTH_OVERRIDE_NOT_FOUND');
  assert.equal((await tg.gate.invoke(ctx, 'lookup_invoice', { invoice: 'INV-1' })).kind, 'allow');
  const events = await tg.events.list({ subject: 'tool:lookup_invoice@1.0.0', limit: 50 });
  const setEvent = events.find((e) => e.action === 'tool.health_override_set');
  assert.ok(setEvent);
  assert.equal(setEvent.actor, 'admin-token');
  assert.match(setEvent.details, /billing API maintenance/);
  assert.ok(events.some((e) => e.action === 'tool.health_override_cleared'));
});

test('CLI: tools health override and clear, recorded; a bad state is refused', async () => {
  // The CLI opens the same database; the running gateway here follows through the store.
  const bad = await runCli(dir, [
    'tools',
    'health',
    'override',
    'lookup_invoice@1.0.0',
    '--state',
    'broken',
    '--reason',
    'x',
    '--until',
    inAnHour(),
  ]);
  assert.notEqual(bad.code, 0);
  const set = await runCli(dir, [
    '--json',
    'tools',
    'health',
    'override',
    'lookup_invoice@1.0.0',
    '--state',
    'degraded',
    '--reason',
    'flaky upstream, watching',
    '--until',
    inAnHour(),
  ]);
  assert.equal(set.code, 0, set.stderr);
  assert.equal((JSON.parse(set.stdout) as { state: string }).state, 'degraded');
  const probe = await runCli(dir, ['--json', 'tools', 'health', 'probe', 'lookup_invoice@1.0.0']);
  assert.equal(probe.code, 0, probe.stderr);
  assert.equal((JSON.parse(probe.stdout) as { probe: null }).probe, null);
  const clear = await runCli(dir, [
    'tools',
    'health',
    'clear',
    'lookup_invoice@1.0.0',
    '--reason',
    'stable',
  ]);
  assert.equal(clear.code, 0, clear.stderr);
  const again = await runCli(dir, ['--json', 'tools', 'health', 'clear', 'lookup_invoice@1.0.0']);
  assert.equal(again.code, 4);
  assert.match(again.stdout + again.stderr, /HEALTH_OVERRIDE_NOT_FOUND/);
  const actions = (await tg.events.list({ subject: 'tool:lookup_invoice@1.0.0', limit: 50 }))
    .filter((e) => e.via === 'cli')
    .map((e) => e.action);
  assert.deepEqual(actions.filter((a) => a.startsWith('tool.health_override')).sort(), [
    'tool.health_override_cleared',
    'tool.health_override_set',
  ]);
});
