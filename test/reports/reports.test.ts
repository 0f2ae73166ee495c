/**
 * Governance reports (C16) against a scenario on every backend: their contents, the
 * access matrix agreeing with the sessions the gate opens, the period bounds, and REST access.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { DEMO_CATALOG } from '../../src/edge/cli/serve.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import type { Report, ReportRow } from '../../src/operations/reports/index.js';
import { backends } from '../support/backends.js';
import { operator } from '../support/operators.js';
import { approvePendingReviews } from '../support/reviews.js';
import { validTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';
import { parseCsv } from './csv.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
/** The operator account that decides approvals here. */
const approver = operator('test-admin');
const ADMIN_TOKEN = 'admin-token-for-report-tests-0123456789abcdef';

for (const backend of backends()) {
  describe(`reports on ${backend.name}`, () => {
    let tg: Gateway;
    let world: World;
    let base = '';
    let apiKey = '';
    let now = new Date('2026-06-01T09:00:00Z');
    const periodFrom = '2026-06-01T10:00:00Z';

    const build = async (name: string, extra: { from?: string; to?: string } = {}) =>
      tg.reports.build({ name, ...extra });
    const row = (r: Report, match: Partial<ReportRow>): ReportRow | undefined =>
      r.rows.find((x) => Object.entries(match).every(([k, v]) => x[k] === v));

    before(async () => {
      world = await openWorld({
        backend,
        rest: { adminToken: ADMIN_TOKEN },
        options: {
          clock: () => now,
          teams: ['commerce-team', 'payments-team'],
          detectors: false,
          executor: demoExecutor().register('test.flaky', (a) => {
            if (a.invoice === 'boom') throw new Error('down');
            return { status: 'ok' };
          }),
        },
      });
      ({ tg, base } = world);
      await tg.config.applyText(readFileSync(DEMO_CATALOG, 'utf8'), admin);
      await approvePendingReviews(tg);
      await tg.config.apply(
        [
          {
            kind: 'Tool',
            spec: validTool({
              id: 'flaky',
              name: 'flaky',
              owner: 'gone-team',
              required_capabilities: ['flaky:use'],
              runtime: { kind: 'inline', handler: 'test.flaky' },
            }),
          },
          {
            kind: 'Tool',
            spec: validTool({
              id: 'legacy_lookup',
              name: 'legacy_lookup',
              owner: 'old-team',
              required_capabilities: ['legacy:use'],
              runtime: { kind: 'inline', handler: 'test.flaky' },
            }),
          },
          { kind: 'Agent', spec: { id: 'legacy-bot', owner: 'old-team', enabled: false } },
          { kind: 'Agent', spec: { id: 'kiosk-bot', owner: 'support-team', tier: 'public' } },
          {
            kind: 'Grant',
            spec: { agent: 'kiosk-bot', capabilities: ['email:send', 'orders:read'] },
          },
          { kind: 'Grant', spec: { agent: 'support-bot', capabilities: ['flaky:use'] } },
        ],
        admin,
      );
      apiKey = (await tg.keys.issue('support-bot', admin)).apiKey;

      // Before the period: one call that the invocation report must not count.
      const early = await tg.sessions.open('support-bot');
      const ectx = { agentId: 'support-bot', sessionId: early.id };
      assert.equal(
        (await tg.gate.invoke(ectx, 'search_tickets', { query: 'login' })).kind,
        'allow',
      );

      now = new Date('2026-06-01T11:00:00Z');
      await tg.catalog.deprecate('add_label', '1.0.0', admin, { windowDays: 10 });
      await tg.catalog.deprecate('create_ticket', '1.0.0', admin, { windowDays: 10 });
      const s = await tg.sessions.open('support-bot');
      const ctx = { agentId: 'support-bot', sessionId: s.id };
      const ok = async (tool: string, args: unknown) =>
        assert.equal((await tg.gate.invoke(ctx, tool, args)).kind, 'allow', tool);
      await ok('search_tickets', { query: 'refund' });
      await ok('search_tickets', { query: 'login' });
      assert.equal((await tg.gate.invoke(ctx, 'get_order', { order_id: 'bad' })).kind, 'deny');
      assert.equal((await tg.gate.invoke(ctx, 'no_such_tool', {})).kind, 'deny');
      await ok('add_label', { ticket_id: 'T-1001', label: 'urgent' });
      await ok('flaky', { invoice: 'fine' });
      assert.equal((await tg.gate.invoke(ctx, 'flaky', { invoice: 'boom' })).kind, 'deny');
      const email = { to: 'ana@customer.example', subject: 'Refund', body: 'On its way' };
      const held = await tg.gate.invoke(ctx, 'send_email', email);
      assert.equal(held.kind, 'pending_approval');
      if (held.kind === 'pending_approval') await tg.approvals.approve(held.approvalId, approver);
      await ok('send_email', email);
      await tg.gate.flush();
      now = new Date('2026-06-01T12:00:00Z');
    });
    after(async () => {
      await world.close();
    });

    test('capability register: every version with lifecycle, tier, action class, owner, provenance', async () => {
      const r = await build('capability-register');
      assert.equal(r.rows.length, 12);
      assert.deepEqual(row(r, { tool: 'search_tickets' }), {
        tool: 'search_tickets',
        version: '1.0.0',
        name: 'search_tickets',
        lifecycle: 'active',
        quarantined: false,
        access_tier: 'restricted',
        action_class: 'read',
        data_access: 'private',
        egress: 'none',
        owner: 'support-team',
        provenance: 'internal',
        registered_at: '2026-06-01T09:00:00.000Z',
        retire_at: null,
        review_state: 'approved',
        reviewer: 'operator:reviewer',
        reviewed_at: '2026-06-01T09:00:00.000Z',
        reviewed_hash: (await tg.catalog.get('search_tickets', '1.0.0')).definition_hash,
        review_covers_definition: true,
      });
      assert.equal(row(r, { tool: 'get_order' })?.review_state, 'not_required');
      assert.equal(row(r, { tool: 'get_order' })?.review_covers_definition, true);
      assert.equal(row(r, { tool: 'add_label' })?.lifecycle, 'deprecated');
      assert.equal(row(r, { tool: 'refund_order' })?.lifecycle, 'draft');
    });

    test('access matrix: allowed and why, and exactly what the gate offers a session', async () => {
      const r = await build('access-matrix');
      const agents = await tg.agents.list();
      assert.equal(r.rows.length, agents.length * 12);
      assert.deepEqual(row(r, { agent: 'support-bot', tool: 'search_tickets' }), {
        agent: 'support-bot',
        tool: 'search_tickets',
        version: '1.0.0',
        allowed: true,
        reason: 'granted: tickets:read',
      });
      const webhook = row(r, { agent: 'support-bot', tool: 'post_webhook' });
      assert.equal(webhook?.allowed, false);
      assert.match(String(webhook?.reason), /toxic combination/);
      assert.equal(
        row(r, { agent: 'ops-bot', tool: 'search_tickets' })?.reason,
        'missing capabilities: tickets:read',
      );
      assert.equal(
        row(r, { agent: 'kiosk-bot', tool: 'send_email' })?.reason,
        "tool tier restricted is above the agent's tier public",
      );
      assert.equal(row(r, { agent: 'kiosk-bot', tool: 'get_order' })?.allowed, true);
      assert.equal(
        row(r, { agent: 'support-bot', tool: 'grant_role' })?.reason,
        'not offered: draft',
      );
      assert.equal(
        row(r, { agent: 'legacy-bot', tool: 'legacy_lookup' })?.reason,
        'agent disabled',
      );
      for (const agent of ['support-bot', 'ops-bot', 'kiosk-bot']) {
        const session = await tg.sessions.open(agent);
        const offered = session.tools.map((t) => t.id).sort();
        const allowed = r.rows
          .filter((x) => x.agent === agent && x.allowed === true)
          .map((x) => String(x.tool))
          .sort();
        assert.deepEqual(allowed, offered, agent);
      }
    });

    test('invocation report: volumes, error rates, denials by rule, approvals and deprecation usage in the period', async () => {
      const r = await build('invocations', { from: periodFrom, to: '2026-06-02T00:00:00Z' });
      assert.deepEqual(r.period, {
        from: '2026-06-01T10:00:00.000Z',
        to: '2026-06-02T00:00:00.000Z',
      });
      assert.equal(
        row(r, { tool: 'search_tickets' })?.calls,
        2,
        'the call before the period was counted',
      );
      assert.equal(row(r, { tool: 'search_tickets' })?.ok, 2);
      assert.deepEqual(
        { ...row(r, { tool: 'flaky' }) },
        {
          tool: 'flaky',
          agents: 1,
          calls: 2,
          ok: 1,
          errors: 1,
          error_rate: 0.5,
          denials: 0,
          denials_by_rule: '',
          approvals_requested: 0,
          approvals_approved: 0,
          approvals_rejected: 0,
          deprecated_calls: 0,
        },
      );
      assert.equal(row(r, { tool: 'get_order' })?.denials_by_rule, 'schema.pattern=1');
      assert.equal(row(r, { tool: '(unregistered)' })?.denials_by_rule, 'resolve.not_registered=1');
      const email = row(r, { tool: 'send_email' });
      assert.equal(email?.approvals_requested, 1);
      assert.equal(email?.approvals_approved, 1);
      assert.equal(email?.calls, 1);
      assert.equal(row(r, { tool: 'add_label' })?.deprecated_calls, 1);
      const before = await build('invocations', { from: '2026-06-01T08:00:00Z', to: periodFrom });
      assert.equal(before.rows.length, 1);
      assert.equal(row(before, { tool: 'search_tickets' })?.calls, 1);
    });

    test('deprecation impact: who still calls a deprecated version; an unused one has no agent', async () => {
      const r = await build('deprecation-impact');
      assert.deepEqual(
        r.rows.map((x) => [x.tool, x.agent, x.calls]),
        [
          ['add_label', 'support-bot', 1],
          ['create_ticket', null, 0],
        ],
      );
      assert.equal(row(r, { tool: 'add_label' })?.last_call, '2026-06-01T11:00:00.000Z');
    });

    test('orphaned tools: owners that are no known team, enabled agent owner or user', async () => {
      const r = await build('orphaned-tools');
      assert.deepEqual(
        r.rows.map((x) => [x.tool, x.owner, x.reason]),
        [
          ['flaky', 'gone-team', 'owner unknown'],
          ['grant_role', 'security-team', 'owner unknown'],
          ['legacy_lookup', 'old-team', 'owner disabled'],
        ],
      );
    });

    test('REST: admin only, JSON, CSV and Markdown with the same rows, clear errors', async () => {
      const get = async (path: string, token: string | null = ADMIN_TOKEN) => {
        const res = await fetch(base + path, {
          headers: token ? { authorization: `Bearer ${token}` } : {},
        });
        return {
          status: res.status,
          type: res.headers.get('content-type') ?? '',
          text: await res.text(),
        };
      };
      assert.equal((await get('/v1/reports/access-matrix', null)).status, 401);
      assert.equal((await get('/v1/reports/access-matrix', apiKey)).status, 401);
      const json = await get('/v1/reports/access-matrix');
      assert.equal(json.status, 200);
      const report = JSON.parse(json.text) as Report;
      const csv = await get('/v1/reports/access-matrix?format=csv');
      assert.match(csv.type, /^text\/csv/);
      const [header, ...lines] = parseCsv(csv.text);
      assert.deepEqual(header, report.columns);
      assert.equal(lines.length, report.rows.length);
      const first = report.rows[0] ?? {};
      assert.deepEqual(
        lines[0],
        report.columns.map((c) => (first[c] === null ? '' : String(first[c]))),
      );
      const md = await get(`/v1/reports/invocations?format=md&from=${periodFrom}`);
      assert.match(md.type, /^text\/markdown/);
      assert.match(md.text, /^# Invocation audit report/);
      assert.match(md.text, /\| search_tickets \| 1 \| 2 \| 2 \| 0 \| 0 \| 0 \|/);
      assert.equal((await get('/v1/reports/nope')).status, 404);
      assert.equal((await get('/v1/reports/access-matrix?format=xlsx')).status, 400);
      const badDate = await get('/v1/reports/invocations?from=yesterday');
      assert.equal(badDate.status, 400);
      assert.equal((JSON.parse(badDate.text) as { code: string }).code, 'INPUT_INVALID');
      const reversed = await get(`/v1/reports/invocations?from=2026-06-02&to=${periodFrom}`);
      assert.equal(reversed.status, 400);
      assert.deepEqual(JSON.parse((await get('/v1/reports')).text), {
        reports: [
          'capability-register',
          'access-matrix',
          'invocations',
          'deprecation-impact',
          'orphaned-tools',
          'portfolio-audit',
          'security-review-record',
        ],
      });
    });
  });
}
