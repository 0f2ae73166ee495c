/**
 * Approving with a scope in a real browser (chromium via playwright-core): the approval page
 * offers a labelled scope option with its binding in plain words; the approver ticks it, gives
 * bounds and their TOTP code; the page then shows the scope and its use. The agent's next call
 * to the same recipient (other arguments differing) runs without waiting over MCP (the official
 * SDK client), another recipient waits; after the approver revokes the scope on the page, the
 * same recipient waits again.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser } from 'playwright-core';
import {
  type ConsoleGateway,
  decisionOf,
  operator,
  signedInContext,
  watchForScript,
} from '../support/browser.js';
import { consoleSuite, pendingSend } from './console-support.js';

let browser: Browser;
let gw: ConsoleGateway;
let agent: Client;
const sam = operator('sam', ['approver']);

consoleSuite((suite) => {
  ({ browser, gw, agent } = suite);
});

test('an approval with a scope: offered in words, shown with its use, covering the same recipient until revoked', async () => {
  const to = 'uma@customer.example';
  const approvalId = await pendingSend(agent, { to, subject: 'Refund', body: 'First.' });
  const { context, page } = await signedInContext(browser, gw, sam);
  const script = watchForScript(page);
  try {
    await page.goto(`${gw.base}/console/approvals/${approvalId}`);
    const words = (await page.locator('#scope-words').textContent()) ?? '';
    assert.match(words, /send_email@1\.0\.0/);
    assert.match(words, /\/to = uma@customer\.example/);
    assert.match(words, /any other destination, tool, version or run waits/);
    await page.locator('#scope').check();
    await page.locator('#scope-calls').fill('3');
    await page.locator('#scope-minutes').fill('30');
    await page.locator('#scope-totp').fill(await gw.code('sam'));
    await page.locator('#approve').click();
    await page.waitForURL(`**/console/approvals/${approvalId}`);
    // The page says what was approved: a scope, not one retry.
    assert.match((await page.locator('.flash').textContent()) ?? '', /Approved with a scope/);
    const shown = (await page.locator('#scope-view').textContent()) ?? '';
    assert.match(shown, /active/);
    assert.match(shown, /up to 3 calls/);
    assert.match(shown, /1 of 3 calls used/);

    const covered = await agent.callTool({
      name: 'send_email',
      arguments: { to, subject: 'Refund', body: 'Second, other words.' },
    });
    assert.equal(decisionOf(covered).kind, 'allow', JSON.stringify(covered));
    const other = await agent.callTool({
      name: 'send_email',
      arguments: { to: 'vic@customer.example', subject: 'Refund', body: 'Other.' },
    });
    assert.equal(decisionOf(other).kind, 'pending_approval');

    await page.reload();
    assert.match((await page.locator('#scope-view').textContent()) ?? '', /2 of 3 calls used/);
    await page.locator('#revoke-reason').fill('The refunds are done.');
    await page.locator('#revoke-scope').click();
    await page.waitForURL(`**/console/approvals/${approvalId}`);
    assert.match((await page.locator('#scope-view').textContent()) ?? '', /revoked/);
    const after = await agent.callTool({
      name: 'send_email',
      arguments: { to, subject: 'Refund', body: 'Third.' },
    });
    assert.equal(decisionOf(after).kind, 'pending_approval');
    const view = await gw.tg.approvals.get(approvalId);
    assert.equal(view.scope?.status, 'revoked');
    assert.equal(view.scope?.revoked_by, 'operator:sam');
    assert.deepEqual(script.events, []);
  } finally {
    await context.close();
  }
});
