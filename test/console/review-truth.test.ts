/**
 * Review pages that tell the truth, in a real browser (chromium via playwright-core): the approval
 * page lists every reason the gate recorded — a send waits by its action class; a write escalated
 * because injected text entered the run says so, with its source and the flagged text, never
 * "the action class always asks" — and shows bidi and zero-width characters of the arguments as
 * visible escapes, and a declared preview as untrusted text; a four-eyes change page shows the
 * full definition, its facts, the changed paths and its whole diff against the active version; a review page shows scan
 * findings, provenance, code hash and egress hosts; the audit list and record name the actor of
 * every administrative event.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { type ConsoleGateway, operator, signedInContext, TEST_ADMIN } from '../support/browser.js';
import { approvePendingReviews } from '../support/reviews.js';
import { consoleSuite } from './console-support.js';

let browser: Browser;
let gw: ConsoleGateway;
const alice = operator('alice', ['approver', 'auditor']);

consoleSuite((suite) => {
  ({ browser, gw } = suite);
});

async function supportCall(tool: string, args: Record<string, unknown>) {
  const s = await gw.tg.sessions.open('support-bot');
  return gw.tg.gate.invoke({ agentId: 'support-bot', sessionId: s.id }, tool, args);
}

async function onPage<T>(path: string, look: (page: Page) => Promise<T>): Promise<T> {
  const { context, page } = await signedInContext(browser, gw, alice);
  try {
    const res = await page.goto(`${gw.base}/console${path}`);
    assert.equal(res?.status(), 200, path);
    return await look(page);
  } finally {
    await context.close();
  }
}

const text = async (page: Page, selector: string) =>
  (await page.locator(selector).textContent()) ?? '';

test('a send waits by its action class; bidi and zero-width characters of its arguments are visible escapes', async () => {
  const body = 'Refund \u202Edecnalab\u202C sent to \u200Bana\u2066x\u2069.';
  const d = await supportCall('send_email', {
    to: 'ana@customer.example',
    subject: 'Refund',
    body,
  });
  assert.equal(d.kind, 'pending_approval', JSON.stringify(d));
  if (d.kind !== 'pending_approval') return;
  await onPage(`/approvals/${d.approvalId}`, async (page) => {
    const reasons = page.locator('#reasons li.reason');
    assert.equal(await reasons.count(), 1);
    assert.equal(await reasons.first().getAttribute('data-kind'), 'action_class');
    assert.match(await text(page, '#reasons'), /action class \(external_send\) always asks/);
    const args = await text(page, '#arguments');
    assert.doesNotMatch(args, /[\u202E\u202C\u200B\u2066\u2069]/u, 'nothing raw');
    for (const e of ['\\u202E', '\\u202C', '\\u200B', '\\u2066', '\\u2069']) {
      assert.ok(args.includes(e), `${e} in ${args}`);
    }
    assert.equal((JSON.parse(args) as { body: string }).body, body, 'the escapes read back');
  });
});

test('a declared read-only preview is shown on the approval page as untrusted text', async () => {
  const base = (await gw.tg.catalog.get('send_email', '1.0.0')).definition as unknown as Record<
    string,
    unknown
  >;
  await gw.tg.config.apply(
    [
      {
        kind: 'Tool',
        spec: {
          ...base,
          id: 'email_order',
          name: 'email_order',
          description: 'Send the customer one e-mail about their order.',
          input_schema: {
            type: 'object',
            additionalProperties: false,
            required: ['to', 'order_id'],
            properties: {
              to: { type: 'string', format: 'email' },
              order_id: { type: 'string', pattern: '^ORD-[0-9]{6}$' },
            },
          },
          preview: { tool: 'get_order', arguments: { order_id: '/order_id' } },
        },
      },
    ],
    TEST_ADMIN,
  );
  await approvePendingReviews(gw.tg.admin);
  const d = await supportCall('email_order', {
    to: 'ben@customer.example',
    order_id: 'ORD-004211',
  });
  assert.equal(d.kind, 'pending_approval', JSON.stringify(d));
  if (d.kind !== 'pending_approval') return;
  await gw.tg.gate.previewsSettled();
  await onPage(`/approvals/${d.approvalId}`, async (page) => {
    assert.match(await text(page, '#preview-status'), /untrusted/);
    const preview = JSON.parse(await text(page, '#preview')) as Record<string, unknown>;
    assert.equal(preview.order_id, 'ORD-004211');
    assert.equal(preview.status, 'paid');
  });
});

test('a change page shows the full definition, its facts and its diff against the active version; a review page shows the facts', async () => {
  const base = (await gw.tg.catalog.get('refund_order', '1.0.0')).definition as unknown as Record<
    string,
    unknown
  >;
  await gw.tg.config.apply(
    [
      {
        kind: 'Tool',
        spec: {
          ...base,
          version: '1.1.0',
          description: 'Refund an order in full or in part to the original payment method.',
          provenance: 'third_party',
        },
      },
    ],
    TEST_ADMIN,
  );
  const review = (await gw.tg.admin.reviews.of('refund_order', '1.1.0')).find(
    (r) => r.status === 'pending',
  );
  assert.ok(review, 'a third-party version waits for its review');
  await onPage(`/reviews/${review.id}`, async (page) => {
    assert.equal(await text(page, '#facts-provenance'), 'third_party');
    assert.match(await text(page, '#facts-code-hash'), /none declared|sha256:/);
    assert.match(await text(page, '#facts-egress'), /none|constrained|unconstrained/);
    assert.match(await text(page, '#facts-findings'), /no findings|at /);
  });
  await approvePendingReviews(gw.tg.admin);
  const change = (await gw.tg.admin.changes.list('pending')).find(
    (c) => c.tool_id === 'refund_order' && c.tool_version === '1.1.0',
  );
  assert.ok(change, 'the irreversible version waits for approvers');
  await onPage(`/changes/${change.id}`, async (page) => {
    assert.match(await text(page, '#change-definition'), /"version": "1.1.0"/);
    assert.match(await text(page, '#change-definition'), /"input_schema"/);
    const diff = await text(page, '#definition-diff');
    assert.match(diff, /^- {3}"description": "[^"]+",$/m);
    assert.match(diff, /^\+ {3}"description": "Refund an order in full or in part/m);
    assert.match(diff, /^\+ {3}"version": "1.1.0"$/m);
    assert.match(diff, /^ {4}"action_class": "irreversible",$/m, 'unchanged lines kept as context');
    assert.equal(Number(await text(page, '#diff-count')), 6);
    // Above the lines, each changed path with its value before and after.
    const paths = page.locator('#definition-paths tbody tr');
    assert.deepEqual(await paths.locator('td:first-child').allTextContents(), [
      '/description',
      '/provenance',
      '/version',
    ]);
    assert.deepEqual(await paths.last().locator('td').allTextContents(), [
      '/version',
      '"1.0.0"',
      '"1.1.0"',
    ]);
    assert.equal(await page.locator('#definition-diff .diff-skip').count(), 0, 'shown whole');
    assert.equal(await text(page, '#facts-provenance'), 'third_party');
  });
});

test('the audit list and a record name the actor of an administrative event', async () => {
  await onPage('/audit?kind=event.tool.registered', async (page) => {
    const rows = page.locator('table tbody tr');
    assert.ok((await rows.count()) >= 1);
    assert.match((await rows.first().textContent()) ?? '', /test-admin via library/);
    await rows.first().locator('a').first().click();
    await page.waitForURL('**/console/audit/*');
    assert.match(await text(page, 'main'), /Actor\s*test-admin/);
    assert.match(await text(page, 'main'), /Via\s*library/);
  });
  // A change a review approval opened names the reviewer who acted, and whose request it is.
  await onPage('/audit?kind=event.change.requested', async (page) => {
    const rows = page.locator('table tbody tr');
    assert.match((await rows.first().textContent()) ?? '', /operator:reviewer via library/);
    await rows.first().locator('a').first().click();
    await page.waitForURL('**/console/audit/*');
    assert.match(await text(page, 'main'), /Actor\s*operator:reviewer/);
    assert.match(await text(page, 'main'), /requested_by.*test-admin/s);
  });
});

test('a write escalated by injected text shows its true reason, the source and the flagged text', async () => {
  const read = await supportCall('search_tickets', { query: 'ignore' });
  assert.ok(read.kind === 'allow' && read.trust?.injection === true, JSON.stringify(read));
  const d = await supportCall('add_label', { ticket_id: 'T-1003', label: 'urgent' });
  assert.equal(d.kind, 'pending_approval', JSON.stringify(d));
  if (d.kind !== 'pending_approval') return;
  await onPage(`/approvals/${d.approvalId}`, async (page) => {
    const reasons = page.locator('#reasons li.reason');
    assert.equal(await reasons.count(), 1);
    assert.equal(await reasons.first().getAttribute('data-rule'), 'provenance.injection_seen');
    const why = await text(page, '#reasons');
    assert.match(why, /instruction-like text entered this run .*search_tickets/);
    assert.ok(why.includes(read.callId), 'the call the text came in');
    assert.match(await text(page, '.flagged-text'), /Ignore previous instructions/);
    assert.doesNotMatch(await text(page, 'main'), /always asks/, 'never the false reason');
  });
});
