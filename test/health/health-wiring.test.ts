/**
 * The health monitor as the rest of the gateway reads it (C14, C5, C16): a version an admin marks
 * degraded is marked so in the agent's own discovery, with a healthy alternative from the agent's
 * set suggested; a version marked unavailable is left out of discovery and its owner team hears
 * of it on its channel; the portfolio report shows the monitor's state.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { approvePendingReviews } from '../support/reviews.js';
import { validTool } from '../support/tools.js';
import { LOOPBACK_OUTBOUND, type Receiver, webhookReceiver } from '../support/webhook-receiver.js';

/** Channel URLs are sealed: every gateway of this file shares one master key. */
const MASTER_KEY = MasterKey.generate();

const admin: Actor = { id: 'health-admin', via: 'library' };
let dir: string;
let tg: Gateway;
let hook: Receiver;

const tool = (id: string, description: string) =>
  validTool({
    id,
    name: id,
    owner: 'billing-team',
    description,
    data_access: 'public',
    required_capabilities: ['billing:read'],
    tags: ['invoice'],
  });

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-health-wiring-'));
  hook = await webhookReceiver();
  tg = await openGateway({
    outbound: LOOPBACK_OUTBOUND,
    masterKey: MASTER_KEY,
    db: `sqlite:${join(dir, 'tg.db')}`,
  });
  await tg.config.apply(
    [
      { kind: 'Agent', spec: { id: 'finder', owner: 'billing-team', tier: 'public' } },
      { kind: 'Grant', spec: { agent: 'finder', capabilities: ['billing:read'] } },
      { kind: 'Tool', spec: tool('invoice_lookup_x', 'Look up one invoice by its number.') },
      { kind: 'Tool', spec: tool('invoice_lookup_y', 'Look up one invoice by its number, too.') },
    ],
    admin,
  );
  await approvePendingReviews(tg.admin);
  await tg.admin.ownerChannels.add({ team: 'billing-team', url: hook.url }, admin);
});

after(async () => {
  await tg.close();
  await hook.close();
  rmSync(dir, { recursive: true, force: true });
});

const soon = () => new Date(Date.now() + 3_600_000).toISOString();

test('a degraded tool is marked in discovery, with a healthy alternative from the set', async () => {
  await tg.admin.toolHealth.setOverride(
    'invoice_lookup_x',
    '1.0.0',
    { state: 'degraded', reason: 'slow upstream', expires_at: soon() },
    admin,
  );
  await tg.admin.toolHealth.setOverride(
    'invoice_lookup_y',
    '1.0.0',
    { state: 'healthy', reason: 'checked by hand', expires_at: soon() },
    admin,
  );
  const { results } = await tg.agent.discovery.forAgent(
    { kind: 'agent', agentId: 'finder' },
    { q: 'invoice' },
  );
  const x = results.find((r) => r.id === 'invoice_lookup_x');
  const y = results.find((r) => r.id === 'invoice_lookup_y');
  assert.ok(x && y, JSON.stringify(results));
  assert.equal(x.degraded, true);
  assert.equal(x.health.state, 'degraded');
  assert.deepEqual(
    x.alternatives?.map((a) => a.id),
    ['invoice_lookup_y'],
  );
  assert.equal(y.degraded, false);
  // Ranked below the healthy one it matches as well as.
  assert.ok(results.indexOf(y) < results.indexOf(x));
});

test('an unavailable tool leaves discovery and its owner team is told', async () => {
  await tg.admin.toolHealth.setOverride(
    'invoice_lookup_x',
    '1.0.0',
    { state: 'unavailable', reason: 'upstream down', expires_at: soon() },
    admin,
  );
  const { results } = await tg.agent.discovery.forAgent(
    { kind: 'agent', agentId: 'finder' },
    { q: 'invoice' },
  );
  assert.deepEqual(
    results.map((r) => r.id),
    ['invoice_lookup_y'],
  );
  await hook.received(1);
  const notices = hook.json<{ toolgate: { type: string; team: string } }>();
  const unhealthy = notices.filter((n) => n.toolgate.type === 'owner.unhealthy');
  assert.equal(unhealthy.length, 1, JSON.stringify(notices));
  assert.equal(unhealthy[0]?.toolgate.team, 'billing-team');
  // The healthy neighbour's owner hears nothing about it.
  assert.ok(!hook.bodies.some((b) => b.includes('invoice_lookup_y')));
});

test("the portfolio report shows the monitor's state", async () => {
  const report = await tg.admin.reports.build({ name: 'portfolio-audit' });
  const state = (id: string) => report.rows.find((r) => r.tool === id)?.health;
  assert.equal(state('invoice_lookup_x'), 'unavailable');
  assert.equal(state('invoice_lookup_y'), 'healthy');
});
