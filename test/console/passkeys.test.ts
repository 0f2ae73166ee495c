/**
 * Passkeys bound to the decision, in real chromium with a virtual authenticator (the DevTools
 * protocol's WebAuthn domain): an approver enrols a passkey (with a current TOTP code), signs in
 * with password + passkey, approves a call with it; an assertion made for one approval and sent
 * for another (relayed, changed arguments) is refused and changes nothing, a spent one is refused
 * as used, an expired one as expired; the organisation's requirement refuses a TOTP code for a
 * permission-changing call; and the offline check accepts each stored decision and refuses a
 * tampered one. The console is opened at http://localhost: browsers refuse an IP address
 * (127.0.0.1) as WebAuthn relying party, though both are secure contexts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import Sqlite from 'better-sqlite3';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { proveDecisions } from '../../src/api/index.js';
import { isToolgateError } from '../../src/core/index.js';
import {
  type ConsoleGateway,
  closeMcpClient,
  decisionOf,
  ensureOperator,
  launchChromium,
  mcpClient,
  operator,
  startConsoleGateway,
  TEST_ADMIN,
  TEST_PASSWORD,
} from '../support/browser.js';
import { ensureBuilt, runCli } from '../support/cli.js';
import { pendingSend } from './console-support.js';
import { forge } from './passkey-forgery.js';

let browser: Browser;
let gw: ConsoleGateway;
let agent: Client;
/** The console as a browser must open it for passkeys: localhost, not 127.0.0.1. */
let base: string;
let dir: string;
let dbFile: string;
const alice = operator('alice', ['approver']);

before(async () => {
  browser = await launchChromium();
  // The organisation requires passkeys for irreversible and permission-changing decisions.
  dir = mkdtempSync(join(tmpdir(), 'toolgate-passkeys-'));
  dbFile = join(dir, 'tg.db');
  gw = await startConsoleGateway({
    db: `sqlite:${dbFile}`,
    gateway: { passkeys: { required: true } },
  });
  base = gw.base.replace('://127.0.0.1:', '://localhost:');
  agent = await mcpClient(gw.base, gw.supportKey);
  await ensureOperator(gw, alice);
});

after(async () => {
  await closeMcpClient(agent);
  await browser?.close();
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A browser context whose page has a CTAP2 platform authenticator with user verification. */
async function withAuthenticator(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  });
  return { context, page };
}

async function totpSignIn(page: Page, id: string): Promise<void> {
  await page.goto(`${base}/console/login`);
  await page.locator('#operator').fill(id);
  await page.locator('#password').fill(TEST_PASSWORD);
  await page.locator('#totp').fill(await gw.code(id));
  await Promise.all([
    page.waitForURL('**/console/inbox'),
    page.locator('#login-form button[type=submit]').click(),
  ]);
}

async function csrfOf(page: Page): Promise<string> {
  return page.locator('form[action="/console/logout"] input[name=_csrf]').inputValue();
}

/**
 * Run in the page (plain script: the tests' compiler holds no DOM types): the options of one
 * decision from the console, the virtual authenticator's assertion, base64url-encoded as the
 * console's script encodes it.
 */
const RELAY_SCRIPT = `async ({ csrf, kind, id }) => {
  const b64u = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf)))
    .replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  const unb64u = (t) => Uint8Array.from(atob(t.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
  const res = await fetch('/console/decisions/passkey-options', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ _csrf: csrf, kind, id }),
  });
  const o = await res.json();
  if (!res.ok) throw new Error(JSON.stringify(o));
  const cred = await navigator.credentials.get({
    publicKey: {
      challenge: unb64u(o.challenge),
      rpId: o.rpId,
      userVerification: 'required',
      allowCredentials: o.allowCredentials.map((c) => ({ type: 'public-key', id: unb64u(c.id) })),
    },
  });
  const r = cred.response;
  return JSON.stringify({
    id: cred.id,
    rawId: b64u(cred.rawId),
    type: cred.type,
    response: {
      clientDataJSON: b64u(r.clientDataJSON),
      authenticatorData: b64u(r.authenticatorData),
      signature: b64u(r.signature),
      ...(r.userHandle ? { userHandle: b64u(r.userHandle) } : {}),
    },
  });
}`;

/**
 * What the console's script would send for approving `id` — made in the page (the options from
 * the console, the assertion from the virtual authenticator) but not sent: a relay's material.
 */
async function assertionFor(page: Page, kind: 'approval' | 'change', id: string): Promise<string> {
  const csrf = await csrfOf(page);
  return page.evaluate(`(${RELAY_SCRIPT})(${JSON.stringify({ csrf, kind, id })})`);
}

/** Posts the approve form of `approvalId` with a passkey answer; the flash it comes back with. */
async function postApprove(page: Page, approvalId: string, passkey: string): Promise<string> {
  const res = await page.request.post(`${base}/console/approvals/${approvalId}/approve`, {
    form: { _csrf: await csrfOf(page), passkey },
    headers: { origin: base },
  });
  assert.equal(res.status(), 200);
  const text = await res.text();
  return /<div class="flash"[^>]*>([^<]*)</.exec(text)?.[1] ?? text.slice(0, 300);
}

async function refusal(
  p: Promise<unknown>,
): Promise<{ code: string; details: Record<string, unknown> }> {
  try {
    await p;
  } catch (err) {
    assert.ok(isToolgateError(err), String(err));
    return { code: err.code, details: err.details as Record<string, unknown> };
  }
  assert.fail('expected a refusal');
}

let context: BrowserContext;
let page: Page;

test('an approver enrols a passkey with a current TOTP code, and signs in with password + passkey', async () => {
  ({ context, page } = await withAuthenticator());
  await totpSignIn(page, 'alice');
  await page.goto(`${base}/console/passkeys`);
  assert.match((await page.locator('#passkeys').textContent()) ?? '', /no passkey/);
  // Without the code nothing is enrolled (a stolen session cannot add a factor).
  await page.locator('#passkey-name').fill('laptop');
  await page.locator('#enrol-passkey').click();
  await page.locator('.flash', { hasText: 'Refused' }).waitFor();
  assert.match((await page.locator('.flash').textContent()) ?? '', /Refused: .*TOTP/);
  assert.equal((await gw.tg.admin.passkeys.list('alice')).length, 0);

  await page.goto(`${base}/console/passkeys`);
  await page.locator('#passkey-name').fill('laptop');
  await page.locator('#totp').fill(await gw.code('alice'));
  await page.locator('#enrol-passkey').click();
  await page.locator('.flash', { hasText: 'Passkey enrolled' }).waitFor();
  const listed = await gw.tg.admin.passkeys.list('alice');
  assert.equal(listed.length, 1);
  assert.equal(listed[0]?.name, 'laptop');
  assert.match((await page.locator('#passkeys').textContent()) ?? '', /laptop/);

  // Sign out, then in with the password and the passkey instead of the code.
  await Promise.all([
    page.waitForURL('**/console/login'),
    page.locator('form[action="/console/logout"] button').click(),
  ]);
  await page.locator('#operator').fill('alice');
  await page.locator('#password').fill(TEST_PASSWORD);
  await Promise.all([page.waitForURL('**/console/inbox'), page.locator('#passkey-login').click()]);
  const logins = await gw.tg.admin.events.list({ subject: 'operator:alice', limit: 100 });
  const last = logins.filter((e) => e.action === 'operator.logged_in').at(-1);
  assert.deepEqual(JSON.parse(last?.details ?? '{}'), { method: 'password+passkey' });
});

test('a call approved with a passkey: the assertion commits to it, is stored and named in the audit record; the retry runs once', async () => {
  const args = { to: 'ana@customer.example', subject: 'Refund', body: 'On its way.' };
  const id = await pendingSend(agent, args);
  await page.goto(`${base}/console/approvals/${id}`);
  await Promise.all([
    page.waitForURL(`**/console/approvals/${id}`),
    page.locator('#approve-passkey').click(),
  ]);
  await page.waitForSelector('.flash');
  assert.match((await page.locator('.flash').textContent()) ?? '', /Approved/);
  const view = await gw.tg.approvals.get(id);
  assert.equal(view.status, 'approved');
  assert.equal(view.decided_by, 'operator:alice');
  const [event] = await gw.tg.admin.events.list({ subject: `approval:${id}`, limit: 10 });
  const details = JSON.parse(event?.details ?? '{}') as Record<string, unknown>;
  assert.equal(details.second_factor_kind, 'passkey');
  assert.equal(typeof details.assertion, 'string');
  const retry = await agent.callTool({ name: 'send_email', arguments: args });
  assert.equal(decisionOf(retry).kind, 'allow');
  const report = await gw.tg.admin.decisions.verify({ subject: id });
  assert.equal(report.ok, true, JSON.stringify(report));
  assert.equal(report.checked, 1);
});

test('an assertion made for one approval is refused for another (relayed, changed arguments), then used once for its own, then refused as used', async () => {
  const a = await pendingSend(agent, {
    to: 'ben@customer.example',
    subject: 'Invoice',
    body: 'Attached.',
  });
  // The same tool and recipient, other arguments: what a page relaying the approver would swap in.
  const changed = await pendingSend(agent, {
    to: 'ben@customer.example',
    subject: 'Invoice',
    body: 'Pay to IBAN X.',
  });
  const relayed = await pendingSend(agent, {
    to: 'cat@customer.example',
    subject: 'Invoice',
    body: 'Attached.',
  });
  await page.goto(`${base}/console/approvals/${a}`);
  const answer = await assertionFor(page, 'approval', a);

  const forChanged = await postApprove(page, changed, answer);
  assert.match(forChanged, /Refused: this passkey assertion was made for another decision/);
  assert.match(forChanged, /args_hash/);
  const direct = await refusal(gw.tg.admin.approvals.approve(relayed, alice, { passkey: answer }));
  assert.equal(direct.code, 'PASSKEY_REFUSED');
  assert.equal(direct.details.reason, 'other_decision');
  assert.deepEqual(direct.details.differs, ['id', 'args_hash']);
  for (const other of [changed, relayed])
    assert.equal((await gw.tg.approvals.get(other)).status, 'pending', 'nothing changed');
  const refusedEvents = await gw.tg.admin.events.list({
    subject: `approval:${changed}`,
    limit: 10,
  });
  assert.deepEqual(
    refusedEvents.map((e) => [e.action, JSON.parse(e.details ?? '{}').reason]),
    [['passkey.refused', 'other_decision']],
    'the refusal is audited',
  );

  // Its own decision takes it (the refusals spent nothing), once.
  assert.match(await postApprove(page, a, answer), /Approved/);
  assert.equal((await gw.tg.approvals.get(a)).status, 'approved');
  const replay = await refusal(gw.tg.admin.approvals.approve(changed, alice, { passkey: answer }));
  assert.deepEqual([replay.code, replay.details.reason], ['PASSKEY_REFUSED', 'used']);
  const again = await refusal(gw.tg.admin.approvals.approve(a, alice, { passkey: answer }));
  assert.deepEqual([again.code, again.details.reason], ['PASSKEY_REFUSED', 'used']);
  assert.equal((await gw.tg.approvals.get(changed)).status, 'pending');

  // Past its five minutes a challenge is refused as expired, and nothing is decided.
  const late = await assertionFor(page, 'approval', changed);
  gw.clock.advance(6 * 60_000);
  const expired = await refusal(gw.tg.admin.approvals.approve(changed, alice, { passkey: late }));
  assert.deepEqual([expired.code, expired.details.reason], ['PASSKEY_REFUSED', 'expired']);
  assert.equal((await gw.tg.approvals.get(changed)).status, 'pending');
});

test('with passkeys required, a four-eyes change is refused with a TOTP code and approved with a passkey', async () => {
  const pending = (await gw.tg.changes.page('pending', { limit: 50 })).items;
  const change = pending.find((c) => c.kind === 'grant' && c.required === 2);
  assert.ok(change, 'the demo asks two approvers for a privileged grant');
  const totp = await refusal(
    gw.tg.admin.changes.approve(change.id, alice, await gw.code('alice'), 'library'),
  );
  assert.deepEqual(
    [totp.code, totp.details],
    ['PASSKEY_REQUIRED', { kind: 'change', id: change.id }],
  );
  assert.deepEqual((await gw.tg.changes.get(change.id)).approvers, [], 'nothing recorded');
  await page.goto(`${base}/console/changes/${change.id}`);
  await Promise.all([
    page.waitForURL(`**/console/changes/${change.id}`),
    page.locator('#approve-passkey').click(),
  ]);
  await page.waitForSelector('.flash');
  assert.match((await page.locator('.flash').textContent()) ?? '', /approval is recorded/);
  assert.deepEqual((await gw.tg.changes.get(change.id)).approvers, ['operator:alice']);
  const events = await gw.tg.admin.events.list({ subject: `change:${change.id}`, limit: 10 });
  const approved = events.find((e) => e.action === 'change.approved');
  assert.equal(JSON.parse(approved?.details ?? '{}').second_factor_kind, 'passkey');
});

test("removing another operator's passkey without the admin role is refused and audited (REST and CLI); one's own is not refused", async () => {
  const dave = operator('dave', ['approver']);
  await ensureOperator(gw, dave);
  const token = (
    await gw.tg.admin.operators.issueToken(operator('root', ['admin']), {
      name: 'dave',
      expiresInDays: 1,
      operatorId: 'dave',
    })
  ).token;
  const [alicesKey] = await gw.tg.admin.passkeys.list('alice');
  assert.ok(alicesKey);
  const forbidden = async () =>
    (await gw.tg.admin.events.list({ subject: 'operator:dave', limit: 100 })).filter(
      (e) => e.action === 'operator.forbidden',
    );
  const rest = await fetch(`${gw.base}/v1/operators/alice/passkeys/${alicesKey.credential_id}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(rest.status, 403);
  const afterRest = await forbidden();
  // Another's passkey is an admin route: the route's refusal is audited as every admin route's.
  assert.equal(afterRest.length, 1, 'the refused removal is audited');
  assert.equal(JSON.parse(afterRest[0]?.details ?? '{}').edge, 'rest');
  ensureBuilt();
  const cli = await runCli(
    dir,
    ['--json', 'approvers', 'remove-passkey', 'alice', alicesKey.credential_id],
    { TOOLGATE_TOKEN: token },
  );
  assert.equal(cli.code, 3, cli.stdout + cli.stderr);
  const afterCli = await forbidden();
  assert.equal(afterCli.length, 2);
  // A credential id is base64url and may begin with '-': an operand, never an unknown option.
  const dashed = await runCli(dir, ['--json', 'approvers', 'remove-passkey', 'alice', '-AbC_1'], {
    TOOLGATE_TOKEN: token,
  });
  assert.equal(dashed.code, 3, dashed.stdout + dashed.stderr);
  assert.doesNotMatch(dashed.stdout + dashed.stderr, /unknown option/);
  assert.equal(JSON.parse(afterCli.at(-1)?.details ?? '{}').edge, 'cli');
  assert.equal((await gw.tg.admin.passkeys.list('alice')).length, 1, 'nothing removed');
  // Dave's own (here: an unknown one of his) is not a refusal: not found, nothing forbidden.
  const own = await fetch(`${gw.base}/v1/operators/me/passkeys/AAAA`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(own.status, 404);
  assert.equal((await forbidden()).length, 3, 'the two CLI refusals and the REST one');
});

test('verify --file is anchored to keys the verifier trusts: a forged evidence file fails, the real one verifies', async () => {
  ensureBuilt();
  const evidence = await gw.tg.admin.decisions.evidence();
  const real = evidence.find((e) => e.assertion.kind === 'approval');
  assert.ok(real);
  const forged = forge(real, 'operator:carol');
  // Self-consistent: it would verify for anyone trusting the key the file itself carries.
  const selfTrusted = await proveDecisions([forged], {
    trustedKeys: [
      {
        operator_id: 'carol',
        credential_id: forged.assertion.credential_id,
        public_key: forged.assertion.public_key,
      },
    ],
  });
  assert.equal(selfTrusted.ok, true, JSON.stringify(selfTrusted));

  const realFile = join(dir, 'evidence.json');
  const forgedFile = join(dir, 'forged.json');
  const keysFile = join(dir, 'keys.json');
  writeFileSync(realFile, JSON.stringify({ evidence }));
  writeFileSync(forgedFile, JSON.stringify({ evidence: [forged] }));
  const keys = await runCli(dir, ['--json', 'decisions', 'keys']);
  assert.equal(keys.code, 0, keys.stderr);
  const listed = JSON.parse(keys.stdout) as { keys: { operator_id: string }[] };
  assert.deepEqual(
    listed.keys.map((k) => k.operator_id),
    ['alice'],
  );
  writeFileSync(keysFile, keys.stdout);

  // Without keys a file proves nothing: refused as a usage error, for the forged and the real.
  for (const file of [forgedFile, realFile]) {
    const bare = await runCli(dir, ['decisions', 'verify', '--file', file]);
    assert.equal(bare.code, 2, bare.stdout + bare.stderr);
    assert.match(bare.stderr + bare.stdout, /--keys.*prove nothing/);
  }
  const attack = await runCli(dir, [
    '--json',
    'decisions',
    'verify',
    '--file',
    forgedFile,
    '--keys',
    keysFile,
  ]);
  assert.equal(attack.code, 6, attack.stdout + attack.stderr);
  const refused = JSON.parse(attack.stdout) as { ok: boolean; proofs: { problems: string[] }[] };
  assert.equal(refused.ok, false);
  assert.match(
    refused.proofs[0]?.problems.join('; ') ?? '',
    /not a passkey the verifier trusts for operator:carol/,
  );
  const benign = await runCli(dir, [
    '--json',
    'decisions',
    'verify',
    '--file',
    realFile,
    '--keys',
    keysFile,
  ]);
  assert.equal(benign.code, 0, benign.stdout + benign.stderr);
  assert.equal(JSON.parse(benign.stdout).checked, evidence.length);

  // The file's audit record claims a scope the person never signed (a standing permission read
  // by an auditor): refused, while the record as written verifies (the benign run above).
  const claimed = {
    ...real,
    events: real.events.map((ev) => ({
      ...ev,
      details: {
        ...(ev.details as Record<string, unknown>),
        scope: { calls: 100, amount_cents: null, until: '2099-01-01T00:00:00.000Z' },
      },
    })),
  };
  const widened = await proveDecisions([claimed], {
    trustedKeys: await gw.tg.admin.decisions.keys(),
  });
  assert.equal(widened.ok, false);
  assert.match(widened.proofs[0]?.problems.join('; ') ?? '', /disagree on whether a scope/);

  // Alice's own credential id with the forger's key: the enrolled key is not the one that signed.
  const sameId = forge(real, real.assertion.approver_id, real.assertion.credential_id);
  const swapped = await proveDecisions([sameId], {
    trustedKeys: await gw.tg.admin.decisions.keys(),
  });
  assert.equal(swapped.ok, false);
  assert.match(swapped.proofs[0]?.problems.join('; ') ?? '', /not the one enrolled/);
});

test('the store check is anchored to the enrolled passkeys: a forged row in the store fails, the real ones verify', async () => {
  const evidence = await gw.tg.admin.decisions.evidence();
  const real = evidence.find((e) => e.assertion.kind === 'approval');
  assert.ok(real);
  const forged = forge(real, real.assertion.approver_id).assertion;
  const db = new Sqlite(dbFile);
  try {
    const cols = Object.keys(forged);
    db.prepare(
      `insert into decision_assertions (${cols.join(', ')}) values (${cols.map(() => '?').join(', ')})`,
    ).run(...cols.map((c) => (forged as unknown as Record<string, unknown>)[c]));
    const report = await gw.tg.admin.decisions.verify({ subject: real.assertion.subject_id });
    const mine = report.proofs.find((p) => p.assertion === forged.id);
    assert.equal(mine?.ok, false);
    assert.match(mine?.problems.join('; ') ?? '', /not a passkey the verifier trusts/);
    const others = report.proofs.filter((p) => p.assertion !== forged.id);
    assert.ok(others.length >= 1);
    assert.ok(
      others.every((p) => p.ok),
      JSON.stringify(others),
    );
  } finally {
    db.prepare('delete from decision_assertions where id = ?').run(forged.id);
    db.close();
  }
});

function loginRows(): number {
  const db = new Sqlite(dbFile, { readonly: true });
  try {
    return (
      db.prepare("select count(*) as n from passkey_challenges where purpose = 'login'").get() as {
        n: number;
      }
    ).n;
  } finally {
    db.close();
  }
}

test('sign-in challenges are bounded per address and in all (429 RATE_LIMITED), expired ones swept; a passkey sign-in still works', async () => {
  gw.clock.advance(6 * 60_000);
  const ask = () =>
    page.request.post(`${base}/console/login/passkey-options`, {
      headers: { origin: base },
      data: {},
    });
  const statuses: number[] = [];
  for (let i = 0; i < 14; i++) statuses.push((await ask()).status());
  assert.deepEqual(statuses, [...Array(10).fill(200), 429, 429, 429, 429]);
  const over = await ask();
  assert.equal(((await over.json()) as { code: string }).code, 'RATE_LIMITED');
  assert.equal(loginRows(), 10, 'a refused request stores nothing');
  // In all, whatever the address: the store's count.
  for (let i = 0; i < 490; i++) await gw.tg.admin.passkeys.loginOptions(base, `198.51.100.${i}`);
  const total = await refusal(gw.tg.admin.passkeys.loginOptions(base, '203.0.113.9'));
  assert.equal(total.code, 'RATE_LIMITED');
  assert.equal(loginRows(), 500);
  // Past their lifetime they are swept, and a sign-in with the passkey works again.
  gw.clock.advance(6 * 60_000);
  await page.goto(`${base}/console/inbox`);
  await Promise.all([
    page.waitForURL('**/console/login'),
    page.locator('form[action="/console/logout"] button').click(),
  ]);
  await page.locator('#operator').fill('alice');
  await page.locator('#password').fill(TEST_PASSWORD);
  await Promise.all([page.waitForURL('**/console/inbox'), page.locator('#passkey-login').click()]);
  assert.ok(loginRows() <= 1, `expired sign-in challenges are swept (${loginRows()} left)`);
});

test('the offline check accepts every stored decision and refuses a tampered one', async () => {
  const good = await gw.tg.admin.decisions.verify();
  assert.equal(good.ok, true, JSON.stringify(good));
  assert.ok(good.checked >= 3);
  const evidence = await gw.tg.admin.decisions.evidence();
  // An export with the arguments' hash changed after the fact: the signature no longer covers it.
  const first = evidence[0];
  assert.ok(first?.approval);
  const tampered = [
    { ...first, approval: { ...first.approval, args_hash: `sha256:${'0'.repeat(64)}` } },
  ];
  const bad = await proveDecisions(tampered, { trustedKeys: await gw.tg.admin.decisions.keys() });
  assert.equal(bad.ok, false);
  assert.match(
    bad.proofs[0]?.problems.join('; ') ?? '',
    /differs from what was signed in args_hash/,
  );
  // A forged signature in the store itself.
  const row = first.assertion;
  const sig = Buffer.from(row.signature, 'base64url');
  sig[sig.length - 1] = (sig[sig.length - 1] ?? 0) ^ 1;
  const db = new Sqlite(dbFile);
  try {
    db.prepare('update decision_assertions set signature = ? where id = ?').run(
      sig.toString('base64url'),
      row.id,
    );
  } finally {
    db.close();
  }
  const forged = await gw.tg.admin.decisions.verify({ subject: row.subject_id });
  assert.equal(forged.ok, false);
  assert.match(forged.proofs[0]?.problems.join('; ') ?? '', /signature does not verify/);
  // A relying party other than the one that signed.
  const elsewhere = await gw.tg.admin.decisions.verify({ rpId: 'toolgate.example' });
  assert.equal(elsewhere.failed, elsewhere.checked);
  await context.close();
});
