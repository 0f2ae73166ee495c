/**
 * A four-eyes change of a large tool definition, in a real browser (chromium via playwright-core)
 * against a served console (attack round 27 F1: a definition with 1,200 input properties was
 * "too long to compare line by line", so a changed `maximum` deep in its schema did not stand
 * out): the change page lists the changed JSON paths with their values before and after, and its
 * line diff shows the changed lines with a few around them, the rest counted — never the 1,199
 * properties that did not change. A small definition's diff is still shown whole
 * (review-truth.test.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  type ConsoleGateway,
  ensureOperator,
  operator,
  signedInContext,
  TEST_ADMIN,
} from '../support/browser.js';
import { approvePendingReviews } from '../support/reviews.js';
import { consoleSuite } from './console-support.js';

let browser: Browser;
let gw: ConsoleGateway;
const alice = operator('alice', ['approver']);
const bob = operator('bob', ['approver']);

consoleSuite((suite) => {
  ({ browser, gw } = suite);
});

/** refund_order's definition as `bulk_adjust@version`, with 1,200 more integer properties. */
async function wideSpec(version: string, maxima: Record<string, number> = {}) {
  const base = (await gw.tg.catalog.get('refund_order', '1.0.0')).definition as unknown as {
    input_schema: { properties: Record<string, unknown> };
  } & Record<string, unknown>;
  const properties: Record<string, unknown> = { ...base.input_schema.properties };
  for (let i = 0; i < 1200; i++) {
    const name = `f${String(i).padStart(4, '0')}`;
    properties[name] = { type: 'integer', minimum: 0, maximum: maxima[name] ?? 100 };
  }
  return {
    ...base,
    id: 'bulk_adjust',
    name: 'bulk_adjust',
    version,
    description: 'Adjust many order amounts at once. Adjustments cannot be undone.',
    input_schema: { ...base.input_schema, properties },
  };
}

/** Applies a version and approves its security review: its four-eyes change, pending. */
async function pendingChange(spec: Record<string, unknown>) {
  await gw.tg.config.apply([{ kind: 'Tool', spec }], TEST_ADMIN);
  await approvePendingReviews(gw.tg.admin);
  const change = (await gw.tg.admin.changes.list('pending')).find(
    (c) => c.tool_id === spec.id && c.tool_version === spec.version,
  );
  assert.ok(change, `${String(spec.id)}@${String(spec.version)} waits for approvers`);
  return change;
}

const text = async (page: Page, selector: string) =>
  (await page.locator(selector).textContent()) ?? '';

test('a change of a 1,200-property definition shows its one changed maximum (path, before, after) and not the 1,199 others', async () => {
  await ensureOperator(gw, alice);
  await ensureOperator(gw, bob);
  // 1.0.0 goes live through its own four eyes; 1.1.0 changes one maximum.
  const first = await pendingChange(await wideSpec('1.0.0'));
  await gw.tg.admin.changes.approve(first.id, alice, await gw.code(alice.id));
  await gw.tg.admin.changes.approve(first.id, bob, await gw.code(bob.id));
  assert.equal((await gw.tg.catalog.get('bulk_adjust', '1.0.0')).lifecycle, 'active');
  const change = await pendingChange(await wideSpec('1.1.0', { f0600: 250 }));

  const { context, page } = await signedInContext(browser, gw, alice);
  try {
    const res = await page.goto(`${gw.base}/console/changes/${change.id}`);
    assert.equal(res?.status(), 200);
    assert.equal(await text(page, '#diff-against-state'), 'active');
    const main = await text(page, 'main');
    assert.doesNotMatch(main, /too long/i, 'compared, not given up');

    // The changed paths: the maximum (and the version itself), with before and after.
    const rows = page.locator('#definition-paths tbody tr');
    const paths = await rows.locator('td:first-child').allTextContents();
    assert.deepEqual(paths, ['/version', '/input_schema/properties/f0600/maximum']);
    const cells = await rows.nth(1).locator('td').allTextContents();
    assert.deepEqual(cells, ['/input_schema/properties/f0600/maximum', '100', '250']);
    assert.equal(await rows.nth(1).getAttribute('data-op'), 'change');
    assert.equal(await text(page, '#diff-paths-count'), '2');

    // The line diff: the changed lines with the property they are in, the rest counted.
    const diff = await text(page, '#definition-diff');
    assert.match(diff, /^- {9}"maximum": 100,$/m);
    assert.match(diff, /^\+ {9}"maximum": 250,$/m);
    assert.match(diff, /^ {8}"f0600": \{$/m, 'the property the change is in');
    assert.deepEqual(diff.match(/"f\d{4}"/g), ['"f0600"'], 'none of the other 1,199');
    assert.equal(Number(await text(page, '#diff-count')), 4, 'the maximum and the version');
    const skipped = (await page.locator('#definition-diff .diff-skip').allTextContents()).map((s) =>
      Number(/(\d+) unchanged/.exec(s)?.[1]),
    );
    const shown = await page.locator('#definition-diff span:not(.diff-skip)').count();
    const total = JSON.stringify(JSON.parse(await text(page, '#change-definition')), null, 2).split(
      '\n',
    ).length;
    assert.equal(
      skipped.reduce((a, b) => a + b, 0) + shown,
      total + 2,
      'every line of the definition is shown or counted (two changed lines removed too)',
    );
  } finally {
    await context.close();
  }
});
