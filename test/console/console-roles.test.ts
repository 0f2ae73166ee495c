/**
 * Role boundaries in a real browser, on real operator accounts: an owner sees only their team's
 * tools in the catalog; an admin who is not an approver gets no approve form and a forged approve
 * is refused (FORBIDDEN) with nothing changed. (The auditor's boundary is in the inbox's tests.)
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser } from 'playwright-core';
import { type ConsoleGateway, operator, signedInContext } from '../support/browser.js';
import { consoleSuite, forgedApprove, pendingSend } from './console-support.js';

let browser: Browser;
let gw: ConsoleGateway;
let agent: Client;

consoleSuite((suite) => {
  ({ browser, gw, agent } = suite);
});

test('an owner sees only their team’s tools in the catalog, whatever the filter asks', async () => {
  const { context, page } = await signedInContext(
    browser,
    gw,
    operator('otto', ['owner'], ['support-team']),
  );
  try {
    await page.goto(`${gw.base}/console/catalog`);
    const rows = page.locator('main table tbody tr');
    const owners = await rows.locator('td:nth-child(5)').allTextContents();
    const tools = await rows.locator('td:nth-child(1)').allTextContents();
    assert.ok(owners.length >= 3, 'the team’s tools are listed');
    assert.deepEqual([...new Set(owners)], ['support-team']);
    assert.ok(tools.includes('send_email'));
    assert.ok(!tools.includes('grant_role'), 'another team’s tool is not shown');
    const all = await gw.tg.admin.catalog.list({});
    assert.ok(
      all.some((t) => t.owner !== 'support-team'),
      'the catalog holds other teams’ tools',
    );

    await page.goto(`${gw.base}/console/catalog?owner=platform-team`);
    assert.equal(await page.locator('main table tbody tr').count(), 0);
  } finally {
    await context.close();
  }
});

test('an admin without the approver role gets no approve form; a forged approve is refused', async () => {
  const args = { to: 'dee@customer.example', subject: 'Hello', body: 'Hi.' };
  const approvalId = await pendingSend(agent, args);
  const { context, page } = await signedInContext(browser, gw, operator('adam', ['admin']));
  try {
    const res = await page.goto(`${gw.base}/console/approvals/${approvalId}`);
    assert.equal(res?.status(), 200, 'an admin may read the approval');
    assert.equal(await page.locator('#approve').count(), 0);
    const forged = await forgedApprove(page, gw, approvalId);
    assert.equal(forged.status(), 403);
    assert.equal((await forged.json()).code, 'FORBIDDEN');
    assert.equal((await gw.tg.approvals.get(approvalId)).status, 'pending', 'nothing changed');
  } finally {
    await context.close();
  }
});

test('the pending count is in the header only for who may read the inbox: not for an owner', async () => {
  // The approval the test above left pending is waiting.
  const owner = await signedInContext(browser, gw, operator('otto', ['owner'], ['support-team']));
  const admin = await signedInContext(browser, gw, operator('adam', ['admin']));
  try {
    await owner.page.goto(`${gw.base}/console/catalog`);
    assert.equal(await owner.page.locator('#pending-count').count(), 0, 'no count for an owner');
    assert.equal(await owner.page.locator('header a[href="/console/inbox"]').count(), 0);
    await admin.page.goto(`${gw.base}/console/catalog`);
    const count = Number((await admin.page.locator('#pending-count').textContent()) ?? '');
    assert.ok(count >= 1, `an admin reads the pending count (${count})`);
  } finally {
    await owner.context.close();
    await admin.context.close();
  }
});
