/**
 * @module The quarterly portfolio audit and the security review record (docs/architecture.md §8,
 * C16) on every backend, from a real scenario: usage and errors from real calls, grants from real
 * agents (a disabled one does not count), redundancy (same capabilities and action class; a
 * near-duplicate description), orphans, health `unchecked` until a monitor judges tools; who
 * reviewed which definition hash, when and with what verdict. JSON, CSV and Markdown through the
 * report service and REST.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import type { Report, ReportRow } from '../../src/operations/reports/index.js';
import { backends } from '../support/backends.js';
import { approveReview, REVIEWER } from '../support/reviews.js';
import { validTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';
import { parseCsv } from './csv.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const ADMIN_TOKEN = 'admin-token-for-portfolio-tests-0123456789abcdef';

for (const backend of backends()) {
  describe(`portfolio and review reports on ${backend.name}`, () => {
    let tg: Gateway;
    let world: World;
    let base = '';
    let now = new Date('2026-06-01T09:00:00Z');
    let portfolio: Report;
    const byTool = (r: Report, tool: string): ReportRow | undefined =>
      r.rows.find((x) => x.tool === tool);

    before(async () => {
      world = await openWorld({
        backend,
        rest: { adminToken: ADMIN_TOKEN },
        options: {
          clock: () => now,
          teams: ['billing-team', 'ops-team'],
          detectors: false,
          executor: demoExecutor()
            .register('test.lookup_invoice', () => ({ status: 'paid' }))
            .register('test.refund', (a) => {
              if (a.invoice === 'boom') throw new Error('down');
              return { status: 'ok' };
            }),
        },
      });
      ({ tg, base } = world);
      await tg.config.apply(
        [
          { kind: 'Tool', spec: validTool() },
          {
            kind: 'Tool',
            spec: validTool({
              id: 'invoice_status',
              name: 'invoice_status',
              owner: 'ghost-team',
              required_capabilities: ['invoices:read'],
              description: 'Return the status and the amount of one invoice, given its number.',
            }),
          },
          {
            kind: 'Tool',
            spec: validTool({
              id: 'refund_lookup',
              name: 'refund_lookup',
              description: 'Find refunds issued to a customer during a month.',
              runtime: { kind: 'inline', handler: 'test.refund' },
            }),
          },
          {
            kind: 'Tool',
            spec: validTool({
              id: 'export_status',
              name: 'export_status',
              owner: 'ops-team',
              required_capabilities: ['ops:read'],
              description: 'Report whether the nightly warehouse export finished.',
            }),
          },
          {
            kind: 'Tool',
            spec: validTool({
              id: 'vendor_search',
              name: 'vendor_search',
              owner: 'ops-team',
              provenance: 'third_party',
              access_tier: 'restricted',
              required_capabilities: ['vendor:use'],
              description: 'Search the vendor catalogue for a part number.',
            }),
          },
          {
            kind: 'Tool',
            spec: validTool({
              id: 'vendor_rates',
              name: 'vendor_rates',
              owner: 'ops-team',
              provenance: 'third_party',
              access_tier: 'restricted',
              required_capabilities: ['vendor:rates'],
              description: 'Quote freight rates between two warehouses.',
            }),
          },
          { kind: 'Agent', spec: { id: 'bot', owner: 'qa' } },
          { kind: 'Agent', spec: { id: 'old-bot', owner: 'qa', enabled: false } },
          { kind: 'Agent', spec: { id: 'kiosk', owner: 'qa', tier: 'public' } },
          { kind: 'Grant', spec: { agent: 'bot', capabilities: ['billing:read', 'vendor:use'] } },
          { kind: 'Grant', spec: { agent: 'old-bot', capabilities: ['billing:read'] } },
          { kind: 'Grant', spec: { agent: 'kiosk', capabilities: ['billing:read', 'vendor:use'] } },
        ],
        admin,
      );
      now = new Date('2026-06-01T10:00:00Z');
      await approveReview(tg, 'vendor_search', '1.0.0');
      const rates = await tg.catalog.get('vendor_rates', '1.0.0');
      await tg.catalog.review('vendor_rates', '1.0.0', REVIEWER, {
        definition_hash: rates.definition_hash,
        decision: 'rejected',
        notes: 'sends | pipes, "quotes" and =formulas',
      });
      now = new Date('2026-06-01T11:00:00Z');
      const s = await tg.sessions.open('bot');
      const ctx = { agentId: 'bot', sessionId: s.id };
      for (const inv of ['A-1', 'A-2', 'A-3'])
        assert.equal((await tg.gate.invoke(ctx, 'lookup_invoice', { invoice: inv })).kind, 'allow');
      assert.equal((await tg.gate.invoke(ctx, 'refund_lookup', { invoice: 'R-1' })).kind, 'allow');
      assert.equal((await tg.gate.invoke(ctx, 'refund_lookup', { invoice: 'boom' })).kind, 'deny');
      await tg.gate.flush();
      now = new Date('2026-06-02T09:00:00Z');
      portfolio = await tg.reports.build({ name: 'portfolio-audit' });
    });
    after(async () => {
      await world.close();
    });

    test('the portfolio audit covers the quarter by default, one row per tool', () => {
      assert.equal(portfolio.report, 'portfolio-audit');
      assert.deepEqual(portfolio.period, {
        from: '2026-03-04T09:00:00.000Z',
        to: '2026-06-02T09:00:00.000Z',
      });
      assert.deepEqual(
        portfolio.rows.map((r) => r.tool),
        [
          'export_status',
          'invoice_status',
          'lookup_invoice',
          'refund_lookup',
          'vendor_rates',
          'vendor_search',
        ],
      );
    });

    test('usage and errors come from the calls that ran', () => {
      const l = byTool(portfolio, 'lookup_invoice');
      assert.deepEqual(
        [l?.calls, l?.errors, l?.agents_calling, l?.last_call],
        [3, 0, 1, '2026-06-01T11:00:00.000Z'],
      );
      const r = byTool(portfolio, 'refund_lookup');
      assert.deepEqual([r?.calls, r?.errors, r?.error_rate], [2, 1, 0.5]);
      assert.deepEqual(
        [byTool(portfolio, 'export_status')?.calls, byTool(portfolio, 'export_status')?.last_call],
        [0, null],
      );
    });

    test('a period before the calls counts none of them', async () => {
      const early = await tg.reports.build({
        name: 'portfolio-audit',
        from: '2026-05-01T00:00:00Z',
        to: '2026-06-01T10:30:00Z',
      });
      assert.equal(byTool(early, 'lookup_invoice')?.calls, 0);
    });

    test('grants: enabled agents whose capabilities and tier reach the tool', () => {
      assert.equal(byTool(portfolio, 'lookup_invoice')?.granted, 'bot, kiosk');
      assert.equal(byTool(portfolio, 'lookup_invoice')?.granted_agents, 2);
      // restricted: the public-tier kiosk does not reach it.
      assert.equal(byTool(portfolio, 'vendor_search')?.granted, 'bot');
      assert.equal(byTool(portfolio, 'export_status')?.granted_agents, 0);
    });

    test('redundancy: the same capabilities, and a near-duplicate description', () => {
      const l = String(byTool(portfolio, 'lookup_invoice')?.redundant_with);
      assert.match(l, /refund_lookup \(same capabilities\)/);
      assert.match(l, /invoice_status \(similar description 0\.\d\d\)/);
      assert.match(String(byTool(portfolio, 'invoice_status')?.redundant_with), /lookup_invoice/);
      assert.equal(byTool(portfolio, 'export_status')?.redundant_with, '');
      assert.equal(byTool(portfolio, 'vendor_search')?.redundant_with, '');
    });

    test('orphans and health', () => {
      assert.equal(byTool(portfolio, 'invoice_status')?.orphaned, 'owner unknown');
      assert.equal(byTool(portfolio, 'lookup_invoice')?.orphaned, null);
      // Health is the monitor's state for the version the row names (live calls count).
      for (const r of portfolio.rows) {
        assert.equal(r.health, tg.health.healthOf(String(r.tool), String(r.version)).state);
      }
      assert.ok(portfolio.rows.some((r) => r.health === 'unchecked'));
    });

    test('the security review record: who reviewed which hash, when, the verdict', async () => {
      const r = await tg.reports.build({ name: 'security-review-record' });
      assert.equal(r.period, null);
      const rows = r.rows.map((x) => [
        x.tool,
        x.verdict,
        x.reviewer,
        x.reviewed_at,
        x.hash_is_registered,
      ]);
      assert.deepEqual(rows.sort(), [
        ['vendor_rates', 'rejected', 'operator:reviewer', '2026-06-01T10:00:00.000Z', true],
        ['vendor_search', 'approved', 'operator:reviewer', '2026-06-01T10:00:00.000Z', true],
      ]);
      const search = r.rows.find((x) => x.tool === 'vendor_search');
      assert.equal(
        search?.definition_hash,
        (await tg.catalog.get('vendor_search', '1.0.0')).definition_hash,
      );
      assert.equal(search?.registered_by, 'test-admin');
      assert.match(String(search?.reasons), /third_party|restricted/);
      // A period before any review holds none.
      const none = await tg.reports.build({
        name: 'security-review-record',
        from: '2026-01-01',
        to: '2026-02-01',
      });
      assert.deepEqual(none.rows, []);
    });

    test('both over REST in JSON, CSV and Markdown, the notes’ text escaped', async () => {
      const get = (path: string) =>
        fetch(`${base}${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      const json = await get('/v1/reports/portfolio-audit');
      assert.equal(json.status, 200);
      assert.equal(((await json.json()) as Report).rows.length, 6);
      const csv = await get('/v1/reports/security-review-record?format=csv');
      assert.match(csv.headers.get('content-type') ?? '', /text\/csv/);
      const table = parseCsv(await csv.text());
      const header = table[0] ?? [];
      const notes = header.indexOf('notes');
      const rejected = table.find((row) => row[header.indexOf('verdict')] === 'rejected');
      assert.equal(rejected?.[notes], 'sends | pipes, "quotes" and =formulas');
      const md = await (await get('/v1/reports/security-review-record?format=md')).text();
      assert.match(md, /^# Tool security review record/);
      assert.ok(md.includes('sends \\| pipes'));
      const pmd = await (await get('/v1/reports/portfolio-audit?format=md')).text();
      assert.match(pmd, /\| invoice_status \|/);
      const names = (await (await get('/v1/reports')).json()) as { reports: string[] };
      assert.ok(
        names.reports.includes('portfolio-audit') &&
          names.reports.includes('security-review-record'),
      );
    });
  });
}
