/**
 * Discovery for agents over REST (docs/architecture.md §6): an agent searches with its own key,
 * in its session or without one, and finds only its permitted set — ranked by match, health, SLA
 * and tier, degraded tools marked with healthy alternatives. Attack cases: a tool outside the
 * set (other grants, a higher tier, quarantined, withheld, revoked since the session opened)
 * never shows in results, scores, order, typo fallback, tags, alternatives or errors.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import type { HealthReader, HealthState, ToolHealthView } from '../../src/domain/catalog/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { approvePendingReviews } from '../support/reviews.js';
import { validTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123456789';

/**
 * The documented input of discovery's ranking (the health monitor's read side): a real reader
 * whose answers the test sets, not a stand-in for the monitor.
 */
class SetHealth implements HealthReader {
  readonly states = new Map<string, ToolHealthView>();
  set(id: string, state: HealthState, score: number): void {
    this.states.set(id, { state, score });
  }
  clear(): void {
    this.states.clear();
  }
  healthOf(toolId: string): ToolHealthView {
    return this.states.get(toolId) ?? { state: 'unchecked', score: 0 };
  }
}

const health = new SetHealth();
let tg: Gateway;
let world: World;
let base: string;
let alphaKey: string;
let betaKey: string;

function tool(id: string, description: string, extra: Record<string, unknown> = {}) {
  return validTool({
    id,
    name: id,
    description,
    data_access: 'public',
    required_capabilities: ['billing:read'],
    ...extra,
  });
}

async function get(path: string, key: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: await res.json() };
}

async function discover(key: string, query: string): Promise<Record<string, unknown>[]> {
  const res = await get(`/v1/discover?${query}`, key);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return (res.body as { results: Record<string, unknown>[] }).results;
}

async function openSession(key: string): Promise<string> {
  const res = await fetch(`${base}/v1/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(res.status, 201);
  return ((await res.json()) as { id: string }).id;
}

const ids = (hits: readonly Record<string, unknown>[]) => hits.map((h) => h.id);

for (const backend of backends()) {
  describe(`agent discovery on ${backend.name}`, () => {
    before(async () => {
      world = await openWorld({
        backend,
        rest: { adminToken: ADMIN_TOKEN },
        options: { discoveryHealth: health },
      });
      ({ tg, base } = world);
      await tg.config.apply(
        [
          {
            kind: 'Agent',
            spec: { id: 'alpha', display_name: 'Alpha', owner: 'billing-team', tier: 'public' },
          },
          {
            kind: 'Agent',
            spec: { id: 'beta', display_name: 'Beta', owner: 'hr-team', tier: 'privileged' },
          },
          { kind: 'Grant', spec: { agent: 'alpha', capabilities: ['billing:read'] } },
          {
            kind: 'Grant',
            spec: { agent: 'beta', capabilities: ['payroll:read', 'billing:read'] },
          },
          // Two tools alike but for their SLA, and one more that shares a tag.
          {
            kind: 'Tool',
            spec: tool('invoice_lookup_x', 'Look up one invoice by its number.', {
              tags: ['billing'],
              sla: { target_latency_ms: 200, availability_percent: 99.9 },
            }),
          },
          {
            kind: 'Tool',
            spec: tool('invoice_lookup_y', 'Look up one invoice by its number.', {
              tags: ['billing'],
              sla: { target_latency_ms: 2000, availability_percent: 95 },
            }),
          },
          {
            kind: 'Tool',
            spec: tool('ledger_balance', 'Report the balance of the ledger.', {
              tags: ['billing'],
            }),
          },
          // Outside alpha's set: another capability (with a word only it uses), and a higher tier.
          {
            kind: 'Tool',
            spec: tool(
              'payroll_zebracorn',
              'Export the zebracorn payroll and every invoice of staff.',
              {
                tags: ['billing', 'payroll'],
                required_capabilities: ['payroll:read'],
              },
            ),
          },
          {
            kind: 'Tool',
            spec: tool('invoice_audit_restricted', 'Look up one invoice with its audit trail.', {
              tags: ['billing', 'restricted-only'],
              access_tier: 'restricted',
            }),
          },
        ],
        admin,
      );
      await approvePendingReviews(tg);
      alphaKey = (await tg.keys.issue('alpha', admin)).apiKey;
      betaKey = (await tg.keys.issue('beta', admin)).apiKey;
    });

    after(async () => {
      await world.close();
    });

    describe('an agent discovers with its own key', () => {
      test('without a session: its permitted set, best match first', async () => {
        health.clear();
        const hits = await discover(alphaKey, 'q=look+up+invoice');
        assert.deepEqual(ids(hits).sort(), ['invoice_lookup_x', 'invoice_lookup_y']);
        const first = hits[0] as Record<string, unknown>;
        assert.equal(first.name, first.id);
        assert.deepEqual(first.health, { state: 'unchecked', score: 0 });
        assert.equal(first.degraded, false);
      });

      test("in its session: the session's set, the same answer", async () => {
        health.clear();
        const sid = await openSession(alphaKey);
        const res = await get(`/v1/sessions/${sid}/discover?q=look+up+invoice`, alphaKey);
        assert.equal(res.status, 200);
        assert.deepEqual(res.body, { results: await discover(alphaKey, 'q=look+up+invoice') });
      });

      test('the admin token is not an agent credential here', async () => {
        const res = await get('/v1/discover?q=invoice', ADMIN_TOKEN);
        assert.equal(res.status, 401);
      });

      test('another agent with a wider set finds more (the benign neighbour)', async () => {
        const hits = await discover(betaKey, 'q=invoice&limit=50');
        assert.ok(ids(hits).includes('payroll_zebracorn'));
        assert.ok(ids(hits).includes('invoice_audit_restricted'));
      });
    });

    describe('ranking by match, health, SLA and tier', () => {
      test('with equal match and health, the better SLA ranks first', async () => {
        health.clear();
        const hits = await discover(alphaKey, 'q=look+up+invoice');
        assert.deepEqual(ids(hits), ['invoice_lookup_x', 'invoice_lookup_y']);
        assert.equal(hits[0]?.match, hits[1]?.match);
        assert.ok((hits[0]?.score as number) > (hits[1]?.score as number));
      });

      test('health outweighs SLA: a healthy tool passes an unchecked one', async () => {
        health.clear();
        health.set('invoice_lookup_y', 'healthy', 1);
        const hits = await discover(alphaKey, 'q=look+up+invoice');
        assert.deepEqual(ids(hits), ['invoice_lookup_y', 'invoice_lookup_x']);
        assert.deepEqual(hits[0]?.health, { state: 'healthy', score: 1 });
      });

      test('a degraded tool is marked, ranks below its peer and lists healthy alternatives', async () => {
        health.clear();
        health.set('invoice_lookup_x', 'degraded', 0.4);
        health.set('invoice_lookup_y', 'healthy', 0.9);
        health.set('ledger_balance', 'healthy', 0.8);
        // Outside alpha's set, healthy and sharing the tag: never suggested.
        health.set('payroll_zebracorn', 'healthy', 1);
        const hits = await discover(alphaKey, 'q=look+up+invoice');
        assert.deepEqual(ids(hits), ['invoice_lookup_y', 'invoice_lookup_x']);
        const degraded = hits[1] as Record<string, unknown>;
        assert.equal(degraded.degraded, true);
        const alternatives = degraded.alternatives as { id: string; health: ToolHealthView }[];
        // Matching the query first, then sharing a tag; only healthy ones, only from the set.
        assert.deepEqual(
          alternatives.map((a) => a.id),
          ['invoice_lookup_y', 'ledger_balance'],
        );
        assert.ok(alternatives.every((a) => a.health.state === 'healthy'));
        assert.equal(hits[0]?.alternatives, undefined, 'a healthy tool lists none');
      });

      test('an unavailable tool is neither found nor suggested', async () => {
        health.clear();
        health.set('invoice_lookup_y', 'unavailable', 0);
        health.set('invoice_lookup_x', 'degraded', 0.2);
        const hits = await discover(alphaKey, 'q=look+up+invoice');
        assert.deepEqual(ids(hits), ['invoice_lookup_x']);
        assert.deepEqual(
          ((hits[0]?.alternatives ?? []) as { id: string }[]).map((a) => a.id),
          [],
          'ledger_balance is unchecked, not healthy',
        );
      });

      test('match dominates: a tool matching every word beats a healthy one matching some', async () => {
        health.clear();
        health.set('ledger_balance', 'healthy', 1);
        const hits = await discover(alphaKey, 'q=ledger+invoice+number');
        // invoice_lookup_* match "invoice number", ledger_balance only "ledger".
        assert.equal(hits.length, 3);
        assert.ok(
          hits.every((h) => (h.match as number) > 0 && (h.score as number) <= (h.match as number)),
        );
      });

      test('with no words, the set is listed by quality; tags filter within it', async () => {
        health.clear();
        health.set('ledger_balance', 'healthy', 1);
        const hits = await discover(alphaKey, 'tags=billing');
        assert.deepEqual(ids(hits), ['ledger_balance', 'invoice_lookup_x', 'invoice_lookup_y']);
      });

      test('tier: the least privileged of equal matches ranks first', async () => {
        health.clear();
        // beta (privileged) sees both; the public one first.
        const hits = await discover(betaKey, 'q=look+up+one+invoice&limit=50');
        const order = ids(hits);
        assert.ok(order.indexOf('invoice_lookup_x') < order.indexOf('invoice_audit_restricted'));
      });
    });

    describe('attack: nothing outside the set is learnt', () => {
      test('a word only a hidden tool uses finds nothing, exactly as a word nobody uses', async () => {
        health.clear();
        const hidden = await get('/v1/discover?q=zebracorn', alphaKey);
        const nobody = await get('/v1/discover?q=qwxyzzy', alphaKey);
        assert.deepEqual(hidden, { status: 200, body: { results: [] } });
        assert.deepEqual(nobody, hidden);
      });

      test('a typo of a hidden word: no typo-tolerant match leaks it', async () => {
        assert.deepEqual(await discover(alphaKey, 'q=zebracorm'), []);
      });

      test('the exact id of a hidden tool is not a way in', async () => {
        assert.deepEqual(await discover(alphaKey, 'q=payroll_zebracorn'), []);
        // "invoice" matches alpha's own tools; the hidden id's other words count for nothing.
        assert.deepEqual(
          await discover(alphaKey, 'q=invoice_audit_restricted'),
          await discover(alphaKey, 'q=invoice_qwxyz_qwxyzzy'),
        );
      });

      test('a tag only hidden tools carry answers as an unknown tag does', async () => {
        assert.deepEqual(await discover(alphaKey, 'tags=payroll'), []);
        assert.deepEqual(await discover(alphaKey, 'tags=restricted-only'), []);
        assert.deepEqual(await discover(alphaKey, 'tags=no-such-tag'), []);
      });

      test('tools added outside the set change nothing: same results, scores and order', async () => {
        health.clear();
        const sid = await openSession(alphaKey);
        const queries = [
          'q=look+up+invoice',
          'q=invoice',
          'q=ledger+invoice+number',
          'tags=billing',
          'q=invoce',
        ];
        const beforeSessionless = await Promise.all(queries.map((q) => discover(alphaKey, q)));
        const beforeSession = await Promise.all(
          queries.map((q) => get(`/v1/sessions/${sid}/discover?${q}`, alphaKey)),
        );
        // Many tools that would move BM25 statistics ("invoice" everywhere), a quarantined one
        // that matches, and one of a higher tier with the same words.
        await tg.config.apply(
          [
            ...Array.from({ length: 12 }, (_, i) => ({
              kind: 'Tool',
              spec: tool(
                `payroll_invoice_${i}`,
                `Invoice invoice invoice number ${i} of the payroll.`,
                {
                  tags: ['billing'],
                  required_capabilities: ['payroll:read'],
                },
              ),
            })),
            {
              kind: 'Tool',
              spec: tool('invoice_lookup_restricted', 'Look up one invoice by its number.', {
                tags: ['billing'],
                access_tier: 'restricted',
              }),
            },
          ],
          admin,
        );
        await approvePendingReviews(tg);
        await tg.catalog.register(
          tool('invoice_lookup_q', 'Look up one invoice by its number.'),
          admin,
        );
        await tg.catalog.quarantine('invoice_lookup_q', '1.0.0', admin, 'test');
        const afterSessionless = await Promise.all(queries.map((q) => discover(alphaKey, q)));
        const afterSession = await Promise.all(
          queries.map((q) => get(`/v1/sessions/${sid}/discover?${q}`, alphaKey)),
        );
        assert.deepEqual(afterSessionless, beforeSessionless);
        assert.deepEqual(afterSession, beforeSession);
        // beta, the neighbour whose set they joined, does see them.
        assert.ok(
          ids(await discover(betaKey, 'q=payroll+invoice&limit=50')).includes('payroll_invoice_0'),
        );
      });

      test("another agent's session is not found, exactly as a session that does not exist", async () => {
        const betaSession = await openSession(betaKey);
        const foreign = await get(`/v1/sessions/${betaSession}/discover?q=zebracorn`, alphaKey);
        const unknown = await get('/v1/sessions/ses_does_not_exist/discover?q=zebracorn', alphaKey);
        assert.equal(foreign.status, 404);
        assert.equal((foreign.body as { code: string }).code, 'SESSION_NOT_FOUND');
        assert.deepEqual(
          { ...(foreign.body as Record<string, unknown>), details: {} },
          { ...(unknown.body as Record<string, unknown>), details: {} },
        );
      });

      test('a grant revoked after the session opened: its tools are no longer found', async () => {
        await tg.config.apply(
          [
            {
              kind: 'Agent',
              spec: { id: 'gamma', display_name: 'Gamma', owner: 'billing-team', tier: 'public' },
            },
            { kind: 'Grant', spec: { agent: 'gamma', capabilities: ['billing:read'] } },
          ],
          admin,
        );
        const gammaKey = (await tg.keys.issue('gamma', admin)).apiKey;
        const sid = await openSession(gammaKey);
        assert.ok((await get(`/v1/sessions/${sid}/discover?q=ledger`, gammaKey)).body);
        const found = (await get(`/v1/sessions/${sid}/discover?q=ledger`, gammaKey)).body as {
          results: unknown[];
        };
        assert.equal(found.results.length, 1);
        await tg.agents.revoke('gamma', ['billing:read'], admin);
        assert.deepEqual((await get(`/v1/sessions/${sid}/discover?q=ledger`, gammaKey)).body, {
          results: [],
        });
        assert.deepEqual(await discover(gammaKey, 'q=ledger'), []);
      });

      test('a withheld tool (the toxic combination) is not found beside private reads', async () => {
        await tg.config.apply(
          [
            {
              kind: 'Agent',
              spec: {
                id: 'delta',
                display_name: 'Delta',
                owner: 'billing-team',
                tier: 'restricted',
              },
            },
            { kind: 'Grant', spec: { agent: 'delta', capabilities: ['crm:read', 'crm:send'] } },
            {
              kind: 'Tool',
              spec: tool('crm_private_read', 'Read a customer record.', {
                data_access: 'private',
                required_capabilities: ['crm:read'],
              }),
            },
            {
              kind: 'Tool',
              spec: tool('crm_webhook_send', 'Post a customer record to any webhook.', {
                action_class: 'external_send',
                data_access: 'none',
                egress: { mode: 'unconstrained' },
                required_capabilities: ['crm:send'],
                runtime: { kind: 'inline', handler: 'noop' },
              }),
            },
          ],
          admin,
        );
        await approvePendingReviews(tg);
        const deltaKey = (await tg.keys.issue('delta', admin)).apiKey;
        assert.deepEqual(ids(await discover(deltaKey, 'q=customer+record')), ['crm_private_read']);
        const sid = await openSession(deltaKey);
        const inSession = (await get(`/v1/sessions/${sid}/discover?q=customer+record`, deltaKey))
          .body as { results: { id: string }[] };
        assert.deepEqual(
          inSession.results.map((r) => r.id),
          ['crm_private_read'],
        );
      });

      test('bad input is a structured INPUT_INVALID and changes nothing', async () => {
        const long = await get(`/v1/discover?q=${'a'.repeat(501)}`, alphaKey);
        assert.equal(long.status, 400);
        assert.equal((long.body as { code: string }).code, 'INPUT_INVALID');
        const limit = await get('/v1/discover?limit=51', alphaKey);
        assert.equal(limit.status, 400);
        const extra = await get('/v1/discover?tool=payroll_zebracorn', alphaKey);
        assert.equal(extra.status, 400);
        const many = await get(
          `/v1/discover?tags=${Array.from({ length: 11 }, (_, i) => `t${i}`).join(',')}`,
          alphaKey,
        );
        assert.equal(many.status, 400);
        assert.equal((many.body as { code: string }).code, 'INPUT_INVALID');
      });

      test('the library refuses a malformed query with every problem named', async () => {
        await assert.rejects(
          tg.agent.discovery.forAgent(
            { kind: 'agent', agentId: 'alpha' },
            { q: 7, limit: 0, hint: 'x' },
          ),
          (err: unknown) => {
            const e = err as { code: string; details: { problems: { pointer: string }[] } };
            assert.equal(e.code, 'INPUT_INVALID');
            assert.deepEqual(e.details.problems.map((p) => p.pointer).sort(), [
              '/hint',
              '/limit',
              '/q',
            ]);
            return true;
          },
        );
      });
    });
  });
}
