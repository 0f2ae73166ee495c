/**
 * The health monitor end to end (C14) with a real upstream: an HTTPS server on loopback with a
 * test certificate (names resolve through a table; only 127.0.0.1:443 is exempt from the address
 * rule and is connected at the kernel's port), stopped and started again on the same port. One
 * tool is probed by its upstream's health URL, one by a harmless call with fixed arguments, both
 * under the http runtime's egress rules. The upstream dies: both are marked unavailable, left out
 * of new sessions and of a refreshed one (what MCP list_changed follows), calls fail fast with
 * TOOL_UNAVAILABLE, each change is an audit record, the owner team hears of it on its channel,
 * and the agent's own discovery offers the healthy alternative in its set (a local mirror of the
 * catalogue); it comes back: so do they.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { InlineExecutor } from '../../src/execution/runtimes/index.js';
import type { EgressProxy } from '../../src/execution/sandbox/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import type { HealthEvent, HealthState } from '../../src/operations/health/index.js';
import { backends } from '../support/backends.js';
import { ROOT } from '../support/cli.js';
import { loopbackEgress, tableResolver } from '../support/egress.js';
import { httpReadTool, validTool } from '../support/tools.js';
import { LOOPBACK_OUTBOUND, type Receiver, webhookReceiver } from '../support/webhook-receiver.js';
import { openWorld, type World } from '../support/world.js';
import { FAST_HEALTH, healthReaches, INTERVAL_MS, RestartableUpstream } from './health-support.js';

/** Channel URLs are sealed: every gateway of this file shares one master key. */
const MASTER_KEY = MasterKey.generate();

const admin: Actor = { id: 'test-admin', via: 'library' };
const tlsDir = join(ROOT, 'test', 'fixtures', 'egress-tls');
const TARGET = '127.0.0.1:443';

/** A read tool of the HTTPS upstream, owned by the catalogue team. */
function apiTool(id: string, extra: Record<string, unknown>) {
  return httpReadTool(id, 'api.example.test', {
    owner: 'catalog-team',
    tags: ['catalogue'],
    ...extra,
  });
}

/** A real HTTPS upstream that can be stopped and started again on the same port. */
class Upstream extends RestartableUpstream {
  readonly seen: string[] = [];

  protected override handle(req: IncomingMessage, res: ServerResponse): void {
    this.seen.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: true, path: req.url }));
  }
}

for (const backend of backends()) {
  describe(`health monitor with a real upstream on ${backend.name}`, () => {
    let tg: Gateway;
    let world: World;
    let proxy: EgressProxy;
    const upstream = new Upstream();
    let hook: Receiver;
    const events: HealthEvent[] = [];

    /** Resolves at the first change of `tool` to `state` from now on, with the time it took. */
    const reaches = (tool: string, state: HealthState) => healthReaches(tg, tool, state);

    before(async () => {
      await upstream.start();
      hook = await webhookReceiver();
      const resolver = tableResolver({ 'api.example.test': ['127.0.0.1'] });
      const egress = loopbackEgress(resolver, TARGET, upstream.port, tlsDir);
      proxy = egress.proxy;
      world = await openWorld({
        backend,
        options: {
          outbound: LOOPBACK_OUTBOUND,
          masterKey: MASTER_KEY,
          executor: new InlineExecutor().register('t.mirror', () => ({ ok: true })),
          egress,
          health: FAST_HEALTH,
        },
      });
      tg = world.tg;
      tg.health.on((e) => events.push(e));
      await tg.config.apply(
        [
          { kind: 'Agent', spec: { id: 'caller', owner: 'qa' } },
          { kind: 'Grant', spec: { agent: 'caller', capabilities: ['api:read'] } },
          {
            kind: 'Tool',
            spec: validTool({
              id: 'mirror_item',
              name: 'mirror_item',
              description: 'Look up one catalogue item by its id in the local mirror.',
              owner: 'mirror-team',
              tags: ['catalogue'],
              data_access: 'public',
              access_tier: 'public',
              required_capabilities: ['api:read'],
              runtime: { kind: 'inline', handler: 't.mirror' },
              probe: { kind: 'call', arguments: { invoice: 'probe' } },
            }),
          },
        ],
        admin,
      );
      await tg.admin.ownerChannels.add({ team: 'catalog-team', url: hook.url }, admin);
    });

    after(async () => {
      await world.close();
      await proxy.close();
      await upstream.stop();
      await hook.close();
    });

    async function session() {
      const s = await tg.sessions.open('caller');
      return { agentId: 'caller', sessionId: s.id };
    }

    async function offered(sessionId: string): Promise<string[]> {
      const tools = (await tg.sessions.exportTools(sessionId, 'caller', 'mcp')) as {
        name: string;
      }[];
      return tools
        .map((t) => t.name)
        .filter((n) => n !== 'mirror_item')
        .sort();
    }

    test('a tool is unchecked (score 0) until its first probe, which runs at registration', async () => {
      assert.deepEqual(tg.health.healthOf('api_by_url', '1.0.0'), { state: 'unchecked', score: 0 });
      const healthy = Promise.all([
        reaches('api_by_url', 'healthy'),
        reaches('api_by_call', 'healthy'),
      ]);
      await tg.config.apply(
        [
          apiTool('api_by_url', {
            probe: { kind: 'http', url: 'https://api.example.test/healthz' },
          }),
          apiTool('api_by_call', { probe: { kind: 'call', arguments: { item: 'probe-item' } } }),
        ].map((spec) => ({ kind: 'Tool', spec })),
        admin,
      );
      await healthy;
      assert.ok(upstream.seen.includes('/healthz'), 'the health URL was asked');
      assert.ok(upstream.seen.includes('/v1/items/probe-item'), 'the probe call ran');
      const view = tg.health.healthOf('api_by_url', '1.0.0');
      assert.equal(view.state, 'healthy');
      assert.ok(view.score > 0.8 && view.score <= 1);
      assert.equal(tg.admin.toolHealth.status('api_by_call', '1.0.0').probe, 'call');
    });

    test('the upstream dies: marked unavailable within an interval, withdrawn, calls fail fast; it comes back', async () => {
      const s = await session();
      assert.deepEqual(await offered(s.sessionId), ['api_by_call', 'api_by_url']);
      const ok = await tg.gate.invoke(s, 'api_by_url', { item: 'abc' });
      assert.equal(ok.kind, 'allow', JSON.stringify(ok));

      const down = Promise.all([
        reaches('api_by_url', 'unavailable'),
        reaches('api_by_call', 'unavailable'),
      ]);
      await upstream.stop();
      const [msUrl, msCall] = await down;
      // One interval until the next probe, then two quick confirmations (breaker: 3 failures).
      assert.ok(
        Math.max(msUrl, msCall) < INTERVAL_MS + 5_000,
        `withdrawn after ${msUrl}/${msCall} ms`,
      );

      const seenBefore = upstream.seen.length;
      const refused = await tg.gate.invoke(s, 'api_by_url', { item: 'abc' });
      assert.equal(refused.kind, 'deny');
      if (refused.kind === 'deny') {
        assert.equal(refused.code, 'TOOL_UNAVAILABLE');
        assert.equal(refused.rule, 'health.circuit_open');
      }
      assert.equal(upstream.seen.length, seenBefore, 'nothing was sent upstream');
      // The owner team is told, once per tool; the agent's discovery offers the healthy mirror.
      await hook.received(2);
      const told = hook
        .json<{ toolgate: { type: string; team: string }; text: string }>()
        .filter((n) => n.toolgate.type === 'owner.unhealthy');
      assert.equal(told.length, 2, JSON.stringify(told));
      assert.ok(told.every((n) => n.toolgate.team === 'catalog-team'));
      assert.ok(told.some((n) => n.text.includes('api_by_url')));
      const found = await tg.agent.discovery.forAgent(
        { kind: 'agent', agentId: 'caller' },
        { q: 'catalogue item' },
      );
      assert.deepEqual(
        found.results.map((r) => r.id),
        ['mirror_item'],
      );
      // Not offered: a new session's set, and the old session's refreshed set (list_changed).
      const fresh = await session();
      assert.deepEqual(await offered(fresh.sessionId), []);
      assert.equal((await tg.sessions.refresh(s.sessionId, 'caller')).changed, true);
      assert.deepEqual(await offered(s.sessionId), []);

      const up = Promise.all([reaches('api_by_url', 'healthy'), reaches('api_by_call', 'healthy')]);
      await upstream.start();
      await up;
      assert.equal((await tg.sessions.refresh(s.sessionId, 'caller')).changed, true);
      assert.deepEqual(await offered(s.sessionId), ['api_by_call', 'api_by_url']);
      const again = await tg.gate.invoke(s, 'api_by_url', { item: 'abc' });
      assert.equal(again.kind, 'allow', JSON.stringify(again));

      // Every change is an audit record (event.tool.health_changed), the denial too.
      await tg.health.flush();
      const changes = (
        await tg.events.list({ subject: 'tool:api_by_url@1.0.0', limit: 50 })
      ).filter((e) => e.action === 'tool.health_changed');
      const path = changes.map((e) => (JSON.parse(e.details) as { to: string }).to);
      assert.ok(path.includes('unavailable') && path.at(-1) === 'healthy', path.join(' → '));
      const metrics = (await tg.metrics.render()).body;
      assert.match(metrics, /toolgate_health_probes_total\{kind="http",outcome="failed"\} [1-9]/);
      assert.match(metrics, /toolgate_health_changes_total\{to="unavailable"\} [1-9]/);
    });

    test('an admin override withdraws a healthy tool until cleared; audited with its reason', async () => {
      const s = await session();
      const expires = new Date(Date.now() + 3_600_000).toISOString();
      await assert.rejects(
        tg.admin.toolHealth.setOverride(
          'api_by_url',
          '1.0.0',
          { state: 'unavailable', reason: ' ', expires_at: expires },
          admin,
        ),
        (err: { code?: string }) => err.code === 'INPUT_INVALID',
      );
      await assert.rejects(
        tg.admin.toolHealth.setOverride(
          'api_by_url',
          '1.0.0',
          { state: 'broken', reason: 'x', expires_at: 'yesterday' },
          admin,
        ),
        (err: { code?: string; details?: { problems: { pointer: string }[] } }) =>
          err.code === 'INPUT_INVALID' &&
          (err.details?.problems ?? []).map((p) => p.pointer).join(',') === '/state,/expires_at',
      );
      assert.equal(
        tg.admin.toolHealth.status('api_by_url', '1.0.0').override,
        null,
        'nothing changed',
      );
      const view = await tg.admin.toolHealth.setOverride(
        'api_by_url',
        '1.0.0',
        { state: 'unavailable', reason: 'upstream maintenance window', expires_at: expires },
        admin,
      );
      assert.equal(view.state, 'unavailable');
      const refused = await tg.gate.invoke(s, 'api_by_url', { item: 'abc' });
      assert.equal(refused.kind === 'deny' && refused.rule, 'health.override');
      // The neighbour is untouched.
      assert.equal((await tg.gate.invoke(s, 'api_by_call', { item: 'abc' })).kind, 'allow');
      await tg.admin.toolHealth.clearOverride('api_by_url', '1.0.0', admin, 'maintenance over');
      await assert.rejects(
        tg.admin.toolHealth.clearOverride('api_by_url', '1.0.0', admin),
        (err: { code?: string }) => err.code === 'HEALTH_OVERRIDE_NOT_FOUND',
      );
      assert.equal((await tg.gate.invoke(s, 'api_by_url', { item: 'abc' })).kind, 'allow');
      const audit = (await tg.events.list({ subject: 'tool:api_by_url@1.0.0', limit: 100 })).map(
        (e) => e.action,
      );
      assert.ok(audit.includes('tool.health_override_set'));
      assert.ok(audit.includes('tool.health_override_cleared'));
    });
  });
}
