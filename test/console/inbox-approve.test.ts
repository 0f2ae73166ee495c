/**
 * The approvals inbox in a real browser (chromium via playwright-core): an agent's call over MCP
 * (the official SDK client) waits; the approver finds it in the inbox, reads the resolved call,
 * approves it; the agent's retry runs once. A reject needs a reason and is recorded as the
 * console session's operator.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser } from 'playwright-core';
import {
  type ConsoleGateway,
  closeMcpClient,
  decisionOf,
  mcpClient,
  operator,
  signedInContext,
  watchForScript,
} from '../support/browser.js';
import { approvePendingReviews } from '../support/reviews.js';
import { applySendEmailCopy, consoleSuite, forgedApprove, pendingSend } from './console-support.js';

let browser: Browser;
let gw: ConsoleGateway;
let agent: Client;
const alice = operator('alice', ['approver']);
// The reject has an approver of its own, so the codes of Alice's logins and step-ups spread
// over fewer operators (a code works once per operator, three steps in the verifier's window).
const ada = operator('ada', ['approver']);

consoleSuite((suite) => {
  ({ browser, gw, agent } = suite);
});

test('a pending call from an agent over MCP is in the inbox; approved in the console, its retry runs once', async () => {
  const args = { to: 'ana@customer.example', subject: 'Your refund', body: 'It is on its way.' };
  const first = await agent.callTool({ name: 'send_email', arguments: args });
  const pending = decisionOf(first);
  assert.equal(pending.kind, 'pending_approval');
  const approvalId = String(pending.approval_id);

  const { context, page } = await signedInContext(browser, gw, alice);
  const script = watchForScript(page);
  try {
    const res = await page.goto(`${gw.base}/console`);
    assert.equal(res?.status(), 200);
    const row = page.locator(`#inbox tr[data-id="${approvalId}"]`);
    assert.equal(await row.count(), 1, 'the pending approval is listed');
    const text = (await row.textContent()) ?? '';
    assert.match(text, /send_email@1\.0\.0/);
    assert.match(text, /external_send/);
    assert.match(text, /support-bot/);
    assert.match(text, /\d+h \d+m|\d+m/, 'the time left');
    assert.ok(Number((await page.locator('#pending-count').textContent()) ?? '') >= 1);

    await row.locator('a').click();
    await page.waitForURL(`**/console/approvals/${approvalId}`);
    assert.equal((await page.locator('#tool').textContent()) ?? '', 'send_email');
    const shown = JSON.parse((await page.locator('#arguments').textContent()) ?? '');
    assert.deepEqual(shown, args, 'the literal arguments the gate resolved');
    assert.match((await page.locator('#hosts').textContent()) ?? '', /mail\.example\.com/);

    await page.locator('#approve').click();
    await page.waitForURL(`**/console/approvals/${approvalId}`);
    assert.match((await page.locator('.flash').textContent()) ?? '', /Approved/);
    assert.match((await page.locator('main').textContent()) ?? '', /approved.*operator:alice/s);

    const view = await gw.tg.approvals.get(approvalId);
    assert.equal(view.status, 'approved');
    assert.equal(view.decided_by, 'operator:alice', 'recorded as the session’s operator');
    const events = await gw.tg.admin.events.list({ subject: `approval:${approvalId}`, limit: 10 });
    assert.deepEqual(
      events.map((e) => [e.action, e.actor, e.via]),
      [['approval.approved', 'operator:alice', 'console']],
    );

    const retry = await agent.callTool({ name: 'send_email', arguments: args });
    assert.notEqual(retry.isError, true, JSON.stringify(retry));
    assert.equal(decisionOf(retry).kind, 'allow');
    const again = await agent.callTool({ name: 'send_email', arguments: args });
    assert.equal(decisionOf(again).kind, 'pending_approval', 'the approval is used once');
    assert.deepEqual(script.events, []);
  } finally {
    await context.close();
  }
});

test('a reject needs a reason; the rejected call is gone from the inbox and its retry waits anew', async () => {
  const args = { to: 'ben@customer.example', subject: 'Invoice', body: 'Attached.' };
  const approvalId = await pendingSend(agent, args);
  const { context, page } = await signedInContext(browser, gw, ada);
  try {
    await page.goto(`${gw.base}/console/approvals/${approvalId}`);
    // The browser enforces `required`; a form sent without it is refused by the server too.
    assert.equal(await page.locator('#reason').getAttribute('required'), '');
    const csrf = await page.locator('#reject-form input[name=_csrf]').inputValue();
    const blank = await page.request.post(`${gw.base}/console/approvals/${approvalId}/reject`, {
      form: { _csrf: csrf, reason: '   ' },
      headers: { origin: gw.base },
      maxRedirects: 0,
    });
    assert.equal(blank.status(), 303);
    assert.equal((await gw.tg.approvals.get(approvalId)).status, 'pending', 'nothing changed');

    await page.locator('#reason').fill('Wrong customer: Ben has no open invoice.');
    await page.locator('#reject').click();
    await page.waitForURL(`**/console/approvals/${approvalId}`);
    const view = await gw.tg.approvals.get(approvalId);
    assert.equal(view.status, 'rejected');
    assert.equal(view.decided_by, 'operator:ada');
    assert.equal(view.reason, 'Wrong customer: Ben has no open invoice.');

    await page.goto(`${gw.base}/console/inbox`);
    assert.equal(await page.locator(`#inbox tr[data-id="${approvalId}"]`).count(), 0);
  } finally {
    await context.close();
  }
});

test('an auditor sees the inbox but gets no approve form, and a forged approve is refused', async () => {
  const args = { to: 'cy@customer.example', subject: 'Hello', body: 'Hi.' };
  const approvalId = await pendingSend(agent, args);
  const { context, page } = await signedInContext(browser, gw, operator('carol', ['auditor']));
  try {
    await page.goto(`${gw.base}/console/approvals/${approvalId}`);
    assert.equal(await page.locator('#approve').count(), 0);
    const forged = await forgedApprove(page, gw, approvalId);
    assert.equal(forged.status(), 403);
    assert.equal((await forged.json()).code, 'FORBIDDEN');
    assert.equal((await gw.tg.approvals.get(approvalId)).status, 'pending');
  } finally {
    await context.close();
  }
});

test('a call that needs a step-up is approved only with the approver’s TOTP code', async () => {
  await applySendEmailCopy(gw, {
    id: 'send_email_signed',
    name: 'send_email_signed',
    approval: { mode: 'always', second_factor: true, out_of_band: false },
  });
  // A restricted tool is a draft until its security review.
  await approvePendingReviews(gw.tg.admin);
  const client = await mcpClient(gw.base, gw.supportKey);
  try {
    const args = { to: 'dan@customer.example', subject: 'Contract', body: 'Signed copy.' };
    const id = String(
      decisionOf(await client.callTool({ name: 'send_email_signed', arguments: args })).approval_id,
    );
    const { context, page } = await signedInContext(browser, gw, alice);
    try {
      await page.goto(`${gw.base}/console/approvals/${id}`);
      assert.equal(await page.locator('#totp').count(), 1, 'the form asks for the code');
      await page.locator('#totp').fill('000000');
      await page.locator('#approve').click();
      await page.waitForURL(`**/console/approvals/${id}`);
      assert.match((await page.locator('.flash').textContent()) ?? '', /Refused/);
      assert.equal((await gw.tg.approvals.get(id)).status, 'pending');

      // A wrong code makes the approver wait 1 s before the next attempt (C8's backoff).
      await new Promise((r) => setTimeout(r, 1_100));
      await page.locator('#totp').fill(await gw.code('alice'));
      await page.locator('#approve').click();
      await page.waitForURL(`**/console/approvals/${id}`);
      assert.equal((await gw.tg.approvals.get(id)).status, 'approved');
      const retry = await client.callTool({ name: 'send_email_signed', arguments: args });
      assert.equal(decisionOf(retry).kind, 'allow', JSON.stringify(retry));
    } finally {
      await context.close();
    }
  } finally {
    await closeMcpClient(client);
  }
});

test('four eyes in two browser contexts: the same operator twice is refused, a second one applies it', async () => {
  const pending = (await gw.tg.changes.page('pending', { limit: 50 })).items;
  const change = pending.find((c) => c.kind === 'grant' && c.required === 2);
  assert.ok(change, 'the demo asks two approvers for a privileged grant');
  const erin = operator('erin', ['approver']);
  const first = await signedInContext(browser, gw, erin);
  const second = await signedInContext(browser, gw, operator('frank', ['approver']));
  try {
    await first.page.goto(`${gw.base}/console/inbox`);
    await first.page.locator(`#inbox tr[data-id="${change.id}"] a`).click();
    await first.page.waitForURL(`**/console/changes/${change.id}`);
    await first.page.locator('#totp').fill(await gw.code('erin'));
    await first.page.locator('#approve').click();
    await first.page.waitForURL(`**/console/changes/${change.id}`);
    assert.deepEqual((await gw.tg.changes.get(change.id)).approvers, ['operator:erin']);

    // Erin again, with a fresh code (a later step), is still one person.
    await first.page.locator('#totp').fill(await gw.code('erin'));
    await first.page.locator('#approve').click();
    await first.page.waitForURL(`**/console/changes/${change.id}`);
    assert.match(
      (await first.page.locator('.flash').textContent()) ?? '',
      /already approved this change/,
    );
    assert.equal((await gw.tg.changes.get(change.id)).status, 'pending');

    await second.page.goto(`${gw.base}/console/changes/${change.id}`);
    await second.page.locator('#totp').fill(await gw.code('frank'));
    await second.page.locator('#approve').click();
    await second.page.waitForURL(`**/console/changes/${change.id}`);
    const done = await gw.tg.changes.get(change.id);
    assert.equal(done.status, 'applied');
    assert.deepEqual([...done.approvers].sort(), ['operator:erin', 'operator:frank']);
  } finally {
    await first.context.close();
    await second.context.close();
  }
});
