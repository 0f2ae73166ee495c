/**
 * A console session acts on the operator's account as the store has it now, over HTTP on a real
 * gateway: an approver disabled, demoted to auditor, or whose password or second factor was reset
 * is refused at once in the session they already had open (401, nothing decided), while an
 * untouched approver beside them, and one whose display name changed, still approve.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  type ConsoleGateway,
  closeMcpClient,
  decisionOf,
  ensureOperator,
  httpSignIn,
  mcpClient,
  operator,
  startConsoleGateway,
} from '../support/browser.js';

/**
 * An admin's account does the setting up: the world's first admin is set up (its confirming
 * admins, test/support/operators.ts), so the bootstrap token changes no decider any more.
 */
const SETUP_ADMIN = operator('test-setup', ['admin']);

let gw: ConsoleGateway;
let agent: Client;

before(async () => {
  gw = await startConsoleGateway();
  agent = await mcpClient(gw.base, gw.supportKey);
});

after(async () => {
  await closeMcpClient(agent);
  await gw?.close();
});

/** Signs `id` (an approver) in through the console's login form over HTTP; returns the cookie. */
async function signIn(id: string): Promise<string> {
  await ensureOperator(gw, operator(id, ['approver']));
  return httpSignIn(gw, id);
}

async function pendingCall(subject: string): Promise<string> {
  const args = { to: 'ana@customer.example', subject, body: 'Hello.' };
  const d = decisionOf(await agent.callTool({ name: 'send_email', arguments: args }));
  assert.equal(d.kind, 'pending_approval');
  return String(d.approval_id);
}

/** Opens the approval's page, then posts its approve form with the page's CSRF token. */
async function approveInConsole(cookie: string, approvalId: string): Promise<number> {
  const page = await fetch(`${gw.base}/console/approvals/${approvalId}`, {
    headers: { cookie },
    redirect: 'manual',
  });
  if (page.status !== 200) return page.status;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
  const res = await fetch(`${gw.base}/console/approvals/${approvalId}/approve`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      cookie,
      origin: gw.base,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ _csrf: csrf }),
  });
  return res.status;
}

test('disabling, demoting or resetting an approver ends their open console session at once; others keep deciding', async () => {
  const cookies = {
    alice: await signIn('alice'),
    bob: await signIn('bob'),
    carol: await signIn('carol'),
    erin: await signIn('erin'),
    dave: await signIn('dave'),
    fay: await signIn('fay'),
  };
  // Every session works before anything changes (the page opens for each).
  for (const cookie of Object.values(cookies)) {
    const res = await fetch(`${gw.base}/console/inbox`, {
      headers: { cookie },
      redirect: 'manual',
    });
    assert.equal(res.status, 200);
  }

  await gw.tg.admin.operators.update(SETUP_ADMIN, 'alice', { disabled: true });
  await gw.tg.admin.operators.update(SETUP_ADMIN, 'bob', { roles: ['auditor'] });
  await gw.tg.admin.operators.setPassword(SETUP_ADMIN, 'carol', 'a brand new passphrase 42');
  await gw.tg.admin.secondFactor.enroll(SETUP_ADMIN, 'erin');
  // A display name is not authority: dave's session goes on.
  await gw.tg.admin.operators.update(SETUP_ADMIN, 'dave', { name: 'David' });

  for (const id of ['alice', 'bob', 'carol', 'erin'] as const) {
    const approvalId = await pendingCall(`for ${id}`);
    const page = await fetch(`${gw.base}/console/approvals/${approvalId}`, {
      headers: { cookie: cookies[id] },
      redirect: 'manual',
    });
    assert.equal(page.status, 303, `${id}'s page sends them to sign in`);
    assert.equal(page.headers.get('location'), '/console/login');
    const res = await fetch(`${gw.base}/console/approvals/${approvalId}/approve`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: cookies[id],
        origin: gw.base,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ _csrf: 'whatever-the-old-page-held' }),
    });
    assert.equal(res.status, 401, `${id}'s old session decides nothing`);
    assert.equal((await gw.tg.approvals.get(approvalId)).status, 'pending');
  }

  const forDave = await pendingCall('for dave');
  assert.equal(await approveInConsole(cookies.dave, forDave), 303);
  const view = await gw.tg.approvals.get(forDave);
  assert.equal(view.status, 'approved');
  assert.equal(view.decided_by, 'operator:dave');
  const forFay = await pendingCall('for fay');
  assert.equal(await approveInConsole(cookies.fay, forFay), 303);
  assert.equal((await gw.tg.approvals.get(forFay)).status, 'approved');
});

test('a role change ends the session even when the roles stay the same; signed in again, the approver decides', async () => {
  const cookie = await signIn('gail');
  await gw.tg.admin.operators.update(SETUP_ADMIN, 'gail', { roles: ['approver'] });
  // A role change ends the session even when the roles end up the same: sign in again.
  const stale = await fetch(`${gw.base}/console/inbox`, {
    headers: { cookie },
    redirect: 'manual',
  });
  assert.equal(stale.status, 303);
  const fresh = await signIn('gail');
  const approvalId = await pendingCall('for gail');
  assert.equal(await approveInConsole(fresh, approvalId), 303);
  assert.equal((await gw.tg.approvals.get(approvalId)).status, 'approved');
});

test('an approval page shows bidi and zero-width characters of the arguments as visible escapes, never raw', async () => {
  const cookie = await signIn('vera');
  const subject = 'Refund \u202Eoverride\u202C and\u200Bhidden';
  const args = { to: 'ana@customer.example', subject, body: 'plain text stays as it is' };
  const d = decisionOf(await agent.callTool({ name: 'send_email', arguments: args }));
  assert.equal(d.kind, 'pending_approval');
  const res = await fetch(`${gw.base}/console/approvals/${String(d.approval_id)}`, {
    headers: { cookie },
    redirect: 'manual',
  });
  assert.equal(res.status, 200);
  const body = await res.text();
  const shown = /<pre id="arguments">([\s\S]*?)<\/pre>/.exec(body)?.[1] ?? '';
  assert.ok(!/[\u202A-\u202E\u200B]/.test(shown), 'no raw bidi or zero-width character');
  assert.match(shown, /Refund \\u202Eoverride\\u202C and\\u200Bhidden/);
  assert.match(shown, /plain text stays as it is/);
});
