/**
 * A security review signed with a passkey, in real chromium with a virtual authenticator (the
 * DevTools protocol's WebAuthn domain), on a gateway whose organisation requires passkeys for
 * irreversible and permission-changing decisions — and approving a review lets new code run, so
 * it is one of them. The reviewer approves a restricted tool's review with the console's passkey
 * button; the challenge commits to the review id, tool, version, definition hash, verdict and
 * reviewer. An assertion made for one review is refused for another, for the other verdict, and
 * for a call approval (and one made for a call approval is refused for a review); a spent one is
 * refused as used. Over REST, the options route and the review route decide a review with a
 * passkey; a TOTP code is refused there and in the CLI (PASSKEY_REQUIRED, audited) while a
 * gateway without the requirement takes it. `decisions verify` checks each stored review
 * assertion offline, and fails on a tampered review or export.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import Sqlite from 'better-sqlite3';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { proveDecisions } from '../../src/api/index.js';
import { type DecisionCommitment, isToolgateError } from '../../src/core/index.js';
import {
  type ConsoleGateway,
  closeMcpClient,
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

let browser: Browser;
let gw: ConsoleGateway;
let agent: Client;
/** The console as a browser must open it for passkeys: localhost, not 127.0.0.1. */
let base: string;
let dir: string;
let dbFile: string;
/** Alice's personal token, for the REST routes and the CLI. */
let token: string;
let context: BrowserContext;
let page: Page;
const alice = operator('alice', ['approver']);

before(async () => {
  browser = await launchChromium();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-review-passkeys-'));
  dbFile = join(dir, 'tg.db');
  gw = await startConsoleGateway({
    db: `sqlite:${dbFile}`,
    gateway: { passkeys: { required: true } },
  });
  base = gw.base.replace('://127.0.0.1:', '://localhost:');
  agent = await mcpClient(gw.base, gw.supportKey);
  await ensureOperator(gw, alice);
  token = (
    await gw.tg.admin.operators.issueToken(operator('root', ['admin']), {
      name: 'alice reviews',
      expiresInDays: 1,
      operatorId: 'alice',
    })
  ).token;
  ({ context, page } = await withAuthenticator());
  await enrolPasskey(page);
});

after(async () => {
  await context?.close();
  await closeMcpClient(agent);
  await browser?.close();
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A browser context whose page has a CTAP2 platform authenticator with user verification. */
async function withAuthenticator(): Promise<{ context: BrowserContext; page: Page }> {
  const ctx = await browser.newContext();
  const p = await ctx.newPage();
  const cdp = await ctx.newCDPSession(p);
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
  return { context: ctx, page: p };
}

/** Alice signs in with her TOTP and enrols a passkey with a current code. */
async function enrolPasskey(p: Page): Promise<void> {
  await p.goto(`${base}/console/login`);
  await p.locator('#operator').fill('alice');
  await p.locator('#password').fill(TEST_PASSWORD);
  await p.locator('#totp').fill(await gw.code('alice'));
  await Promise.all([
    p.waitForURL('**/console/inbox'),
    p.locator('#login-form button[type=submit]').click(),
  ]);
  await p.goto(`${base}/console/passkeys`);
  await p.locator('#passkey-name').fill('laptop');
  await p.locator('#totp').fill(await gw.code('alice'));
  await p.locator('#enrol-passkey').click();
  await p.locator('.flash', { hasText: 'Passkey enrolled' }).waitFor();
  assert.equal((await gw.tg.admin.passkeys.list('alice')).length, 1);
}

interface Draft {
  readonly toolId: string;
  readonly reviewId: string;
  readonly hash: string;
}

/** A restricted copy of send_email registered by the test admin: a draft waiting for review. */
async function draft(toolId: string): Promise<Draft> {
  const def = (await gw.tg.catalog.get('send_email', '1.0.0')).definition as unknown as Record<
    string,
    unknown
  >;
  await gw.tg.config.apply(
    [{ kind: 'Tool', spec: { ...def, id: toolId, name: toolId, access_tier: 'restricted' } }],
    TEST_ADMIN,
  );
  const [review] = await gw.tg.admin.reviews.of(toolId, '1.0.0');
  assert.ok(review && review.status === 'pending', `${toolId} waits for its review`);
  return { toolId, reviewId: review.id, hash: review.definition_hash };
}

/**
 * Run in the page (plain script: the tests' compiler holds no DOM types): WebAuthn options from
 * `url` (the console's options route, or REST with a bearer token), the virtual authenticator's
 * assertion over them, base64url-encoded as the console's script encodes it; not sent anywhere.
 */
const ASSERT_SCRIPT = `async ({ url, headers, body }) => {
  const b64u = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf)))
    .replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  const unb64u = (t) => Uint8Array.from(atob(t.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
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
  return {
    commitment: o.commitment,
    answer: {
      id: cred.id,
      rawId: b64u(cred.rawId),
      type: cred.type,
      response: {
        clientDataJSON: b64u(r.clientDataJSON),
        authenticatorData: b64u(r.authenticatorData),
        signature: b64u(r.signature),
        ...(r.userHandle ? { userHandle: b64u(r.userHandle) } : {}),
      },
    },
  };
}`;

interface Signed {
  readonly commitment: DecisionCommitment;
  readonly answer: Record<string, unknown>;
}

async function signIn(
  url: string,
  headers: Record<string, string>,
  body: Record<string, unknown>,
): Promise<Signed> {
  return page.evaluate(`(${ASSERT_SCRIPT})(${JSON.stringify({ url, headers, body })})`);
}

async function csrf(): Promise<string> {
  return page.locator('form[action="/console/logout"] input[name=_csrf]').inputValue();
}

/** The console's options for deciding review `d` with `decision`, signed by the authenticator. */
async function consoleAssertion(d: Draft, decision: 'approved' | 'rejected'): Promise<Signed> {
  await page.goto(`${base}/console/reviews/${d.reviewId}`);
  return signIn(
    '/console/decisions/passkey-options',
    {},
    {
      _csrf: await csrf(),
      kind: 'review',
      id: d.reviewId,
      decision,
      definition_hash: d.hash,
    },
  );
}

/** The REST review route as Alice (her personal token). */
async function restReview(
  d: Draft,
  body: Record<string, unknown>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${gw.base}/v1/tools/${d.toolId}/versions/1.0.0/review`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ definition_hash: d.hash, notes: 'checked', ...body }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
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

async function statusOf(d: Draft): Promise<string> {
  return (await gw.tg.admin.reviews.get(d.reviewId)).status;
}

/** The details of the review's `tool.reviewed` audit record. */
async function reviewedEvent(d: Draft): Promise<Record<string, unknown>> {
  const events = await gw.tg.admin.events.list({ subject: `tool:${d.toolId}@1.0.0`, limit: 50 });
  const reviewed = events.find((e) => e.action === 'tool.reviewed');
  assert.ok(reviewed, 'the review is audited');
  return JSON.parse(reviewed.details ?? '{}') as Record<string, unknown>;
}

test('a review approved with a passkey in the console: stored with the review, named in its audit record, verified offline', async () => {
  const d = await draft('partner_notify');
  await page.goto(`${base}/console/reviews/${d.reviewId}`);
  await page.locator('#review-notes').fill('Recipient domain and egress checked.');
  await Promise.all([
    page.waitForURL(`**/console/reviews/${d.reviewId}`),
    page.locator('#review-approve-passkey').click(),
  ]);
  await page.waitForSelector('.flash');
  assert.match((await page.locator('.flash').textContent()) ?? '', /Review approved/);
  const review = await gw.tg.admin.reviews.get(d.reviewId);
  assert.equal(review.status, 'approved');
  assert.equal(review.reviewer, 'operator:alice');
  const details = await reviewedEvent(d);
  assert.equal(details.second_factor_kind, 'passkey');
  assert.equal(typeof details.assertion, 'string');
  const report = await gw.tg.admin.decisions.verify({ subject: d.reviewId });
  assert.equal(report.ok, true, JSON.stringify(report));
  assert.deepEqual(
    report.proofs.map((p) => [p.kind, p.subject, p.approver]),
    [['review', d.reviewId, 'operator:alice']],
  );
});

test('an assertion for one review is refused for another review, the other verdict and a call approval (and the reverse); used once, then refused as used', async () => {
  const one = await draft('partner_sms');
  const other = await draft('partner_fax');
  const signed = await consoleAssertion(one, 'approved');
  assert.deepEqual(
    {
      kind: signed.commitment.kind,
      id: signed.commitment.id,
      tool: signed.commitment.tool,
      version: signed.commitment.version,
      args_hash: signed.commitment.args_hash,
      decision: signed.commitment.decision,
      approver: signed.commitment.approver,
    },
    {
      kind: 'review',
      id: one.reviewId,
      tool: 'partner_sms',
      version: '1.0.0',
      args_hash: one.hash,
      decision: 'approve',
      approver: 'operator:alice',
    },
    'the challenge commits to the review, what it reviews, the verdict and the reviewer',
  );
  assert.match(signed.commitment.nonce, /^[A-Za-z0-9_-]{43}$/);

  // Relayed to another review: refused, audited, nothing decided.
  const relayed = await refusal(
    gw.tg.admin.catalog.review(
      other.toolId,
      '1.0.0',
      alice,
      { definition_hash: other.hash, decision: 'approved', notes: 'relayed' },
      { via: 'console', passkey: signed.answer },
    ),
  );
  assert.equal(relayed.code, 'PASSKEY_REFUSED');
  assert.equal(relayed.details.reason, 'other_decision');
  assert.deepEqual(relayed.details.differs, ['id', 'tool', 'args_hash']);
  const refusedEvents = await gw.tg.admin.events.list({
    subject: `review:${other.reviewId}`,
    limit: 10,
  });
  assert.deepEqual(
    refusedEvents.map((e) => [e.action, JSON.parse(e.details ?? '{}').reason]),
    [['passkey.refused', 'other_decision']],
  );
  // The same review, the other verdict (over REST).
  const flipped = await restReview(one, { decision: 'rejected', passkey: signed.answer });
  assert.equal(flipped.status, 403, JSON.stringify(flipped.body));
  assert.equal(flipped.body.code, 'PASSKEY_REFUSED');
  assert.deepEqual((flipped.body.details as { differs: string[] }).differs, ['decision']);
  // Relayed to a call approval: another kind of decision.
  const call = await pendingSend(agent, {
    to: 'ana@customer.example',
    subject: 'Hello',
    body: 'A note.',
  });
  const asApproval = await refusal(
    gw.tg.admin.approvals.approve(call, alice, { passkey: signed.answer }),
  );
  assert.equal(asApproval.details.reason, 'other_decision');
  assert.ok((asApproval.details.differs as string[]).includes('kind'));
  // And an assertion made for the call approval, relayed to the review.
  await page.goto(`${base}/console/approvals/${call}`);
  const forCall = await signIn(
    '/console/decisions/passkey-options',
    {},
    {
      _csrf: await csrf(),
      kind: 'approval',
      id: call,
    },
  );
  const callToReview = await restReview(one, { decision: 'approved', passkey: forCall.answer });
  assert.equal(callToReview.status, 403);
  assert.equal((callToReview.body.details as { reason: string }).reason, 'other_decision');
  assert.ok((callToReview.body.details as { differs: string[] }).differs.includes('kind'));
  for (const d of [one, other]) assert.equal(await statusOf(d), 'pending', 'nothing decided');
  assert.equal((await gw.tg.approvals.get(call)).status, 'pending');

  // Its own review and verdict take it (the refusals spent nothing), over REST; once.
  const own = await restReview(one, { decision: 'approved', passkey: signed.answer });
  assert.equal(own.status, 200, JSON.stringify(own.body));
  assert.equal(await statusOf(one), 'approved');
  assert.equal((await reviewedEvent(one)).second_factor_kind, 'passkey');
  const replay = await refusal(
    gw.tg.admin.catalog.review(
      other.toolId,
      '1.0.0',
      alice,
      { definition_hash: other.hash, decision: 'approved', notes: 'replayed' },
      { via: 'rest', passkey: signed.answer },
    ),
  );
  assert.deepEqual([replay.code, replay.details.reason], ['PASSKEY_REFUSED', 'used']);
  assert.equal(await statusOf(other), 'pending');
});

test('over REST: the options route commits to the review and verdict; the review route takes the answer; a changed definition is refused before any challenge', async () => {
  const d = await draft('partner_pager');
  const url = `/v1/tools/${d.toolId}/versions/1.0.0/review/passkey-options`;
  const auth = { authorization: `Bearer ${token}` };
  const signed = await signIn(url, auth, { definition_hash: d.hash, decision: 'approved' });
  assert.equal(signed.commitment.kind, 'review');
  assert.equal(signed.commitment.id, d.reviewId);
  assert.equal(signed.commitment.args_hash, d.hash);
  const done = await restReview(d, { decision: 'approved', passkey: signed.answer });
  assert.equal(done.status, 200, JSON.stringify(done.body));
  assert.equal((done.body.review as { status: string }).status, 'approved');
  // Options for a definition other than the stored one: refused, no challenge issued.
  const other = await draft('partner_telex');
  const wrong = await fetch(
    `${gw.base}/v1/tools/${other.toolId}/versions/1.0.0/review/passkey-options`,
    {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', origin: base },
      body: JSON.stringify({ definition_hash: `sha256:${'0'.repeat(64)}`, decision: 'approved' }),
    },
  );
  assert.equal(wrong.status, 409);
  assert.equal(((await wrong.json()) as { code: string }).code, 'REVIEW_HASH_MISMATCH');
});

test('with passkeys required a TOTP code is refused for a review approval (REST and CLI, audited); a rejection needs no factor; without the requirement TOTP passes', async () => {
  const d = await draft('partner_radio');
  const rest = await restReview(d, { decision: 'approved', totp: await gw.code('alice') });
  assert.equal(rest.status, 403, JSON.stringify(rest.body));
  assert.equal(rest.body.code, 'PASSKEY_REQUIRED');
  assert.deepEqual(rest.body.details, { kind: 'review', id: d.reviewId });
  // No code at all is the same refusal: the rule, not a missing field.
  const bare = await restReview(d, { decision: 'approved' });
  assert.equal(bare.body.code, 'PASSKEY_REQUIRED');
  // The CLI holds the organisation's rule from the database, though it was started without it.
  ensureBuilt();
  const cli = await runCli(
    dir,
    [
      '--json',
      'tools',
      'review',
      d.toolId,
      '1.0.0',
      '--decision',
      'approved',
      '--hash',
      d.hash,
      '--notes',
      'checked',
      '--totp',
      await gw.code('alice'),
    ],
    { TOOLGATE_TOKEN: token },
  );
  assert.equal(cli.code, 3, cli.stdout + cli.stderr);
  assert.match(cli.stdout + cli.stderr, /PASSKEY_REQUIRED|requires a passkey/);
  assert.equal(await statusOf(d), 'pending', 'nothing decided');
  const required = await gw.tg.admin.events.list({ subject: `review:${d.reviewId}`, limit: 10 });
  assert.deepEqual(
    required.map((e) => e.action),
    ['passkey.required', 'passkey.required', 'passkey.required'],
  );
  // A rejection lets nothing run: no second factor, whatever the requirement.
  const rejected = await restReview(d, { decision: 'rejected', notes: 'not needed' });
  assert.equal(rejected.status, 200, JSON.stringify(rejected.body));
  assert.equal(await statusOf(d), 'rejected');

  // The benign neighbour: a gateway whose organisation does not require passkeys takes TOTP.
  const plain = await startConsoleGateway();
  try {
    await ensureOperator(plain, alice);
    const def = (await plain.tg.catalog.get('send_email', '1.0.0')).definition as unknown as Record<
      string,
      unknown
    >;
    await plain.tg.config.apply(
      [
        {
          kind: 'Tool',
          spec: { ...def, id: 'partner_radio', name: 'partner_radio', access_tier: 'restricted' },
        },
      ],
      TEST_ADMIN,
    );
    const { definition_hash } = await plain.tg.catalog.get('partner_radio', '1.0.0');
    const ok = await plain.tg.admin.catalog.review(
      'partner_radio',
      '1.0.0',
      alice,
      { definition_hash, decision: 'approved', notes: 'checked' },
      { via: 'rest', totp: await plain.code('alice') },
    );
    assert.equal(ok.review.status, 'approved');
  } finally {
    await plain.close();
  }
});

test('decisions verify checks the stored review assertions offline (store and CLI) and fails on a tampered review or export', async () => {
  const good = await gw.tg.admin.decisions.verify();
  assert.equal(good.ok, true, JSON.stringify(good));
  const reviews = good.proofs.filter((p) => p.kind === 'review');
  assert.equal(reviews.length, 3, 'the console, REST-relay and REST-options reviews');
  ensureBuilt();
  const cli = await runCli(dir, ['--json', 'decisions', 'verify']);
  assert.equal(cli.code, 0, cli.stdout + cli.stderr);
  assert.equal(JSON.parse(cli.stdout).ok, true);

  const evidence = await gw.tg.admin.decisions.evidence();
  const real = evidence.find((e) => e.assertion.kind === 'review');
  assert.ok(real?.review);
  const keys = await gw.tg.admin.decisions.keys();
  // An export whose review says another definition was reviewed, or the other verdict.
  const otherHash = await proveDecisions(
    [{ ...real, review: { ...real.review, definition_hash: `sha256:${'1'.repeat(64)}` } }],
    { trustedKeys: keys },
  );
  assert.equal(otherHash.ok, false);
  assert.match(
    otherHash.proofs[0]?.problems.join('; ') ?? '',
    /differs from what was signed in args_hash/,
  );
  const otherVerdict = await proveDecisions(
    [{ ...real, review: { ...real.review, status: 'rejected' } }],
    { trustedKeys: keys },
  );
  assert.match(otherVerdict.proofs[0]?.problems.join('; ') ?? '', /signed in decision/);
  // An export whose audit record says the opposite of what was signed: the other verdict,
  // another definition hash, or another action carrying the assertion's reference.
  const reviewed = real.events.find((ev) => ev.action === 'tool.reviewed');
  assert.ok(reviewed, 'the export holds the review record that names the assertion');
  const withRecord = (details: Record<string, unknown>, action = reviewed.action) => ({
    ...real,
    events: real.events.map((ev) =>
      ev === reviewed
        ? { ...ev, action, details: { ...(ev.details as Record<string, unknown>), ...details } }
        : ev,
    ),
  });
  const cases: [string, ReturnType<typeof withRecord>, RegExp][] = [
    [
      'verdict',
      withRecord({ decision: 'rejected' }),
      /states the verdict rejected, not the signed approved/,
    ],
    [
      'hash',
      withRecord({ definition_hash: `sha256:${'b'.repeat(64)}` }),
      /another definition hash/,
    ],
    ['review', withRecord({ review: 'rev_other' }), /another review/],
    ['action', withRecord({}, 'tool.quarantined'), /is tool\.quarantined, not tool\.reviewed/],
  ];
  for (const [what, evidenceOf, problem] of cases) {
    const proved = await proveDecisions([evidenceOf], { trustedKeys: keys });
    assert.equal(proved.ok, false, `an audit record with another ${what} is refused`);
    assert.match(proved.proofs[0]?.problems.join('; ') ?? '', problem);
  }
  // The benign neighbour: the export as it is verifies.
  assert.equal((await proveDecisions([real], { trustedKeys: keys })).ok, true);
  // The review row changed in the store itself: the store check and the CLI fail.
  const db = new Sqlite(dbFile);
  try {
    db.prepare('update security_reviews set status = ? where id = ?').run(
      'rejected',
      real.review.id,
    );
    const tampered = await gw.tg.admin.decisions.verify({ subject: real.review.id });
    assert.equal(tampered.ok, false);
    assert.match(tampered.proofs[0]?.problems.join('; ') ?? '', /in decision/);
    const failed = await runCli(dir, ['--json', 'decisions', 'verify']);
    assert.equal(failed.code, 6, failed.stdout + failed.stderr);
  } finally {
    db.prepare('update security_reviews set status = ? where id = ?').run(
      'approved',
      real.review.id,
    );
    db.close();
  }
  assert.equal((await gw.tg.admin.decisions.verify()).ok, true);
});
