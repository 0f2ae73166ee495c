/**
 * The console's browser security, attacked in a real browser (chromium via playwright-core):
 * strict headers on every response; CSRF tokens and the same-origin check on every POST (a page
 * on another 127.0.0.1 port — same site, so the SameSite cookie goes with it — auto-submits a
 * form and changes nothing), the passkey ceremonies' JSON requests and the logout alike, each
 * refusal audited as the signed-in operator's; an XSS payload in a tool description and in an argument shown as
 * text with no script run; deny by default without a session; login with one generic failure
 * and a fresh session id; idle timeout; logout.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser } from 'playwright-core';
import {
  CONTENT_SECURITY_POLICY,
  LOGIN_FAILED,
  SESSION_COOKIE,
} from '../../src/edge/console/index.js';
import {
  type ConsoleGateway,
  closeMcpClient,
  decisionOf,
  ensureOperator,
  launchChromium,
  mcpClient,
  operator,
  sessionCookie,
  signedInContext,
  startConsoleGateway,
  submitLogin,
  TEST_ADMIN,
  TEST_PASSWORD,
  watchForScript,
} from '../support/browser.js';
import { approvePendingReviews } from '../support/reviews.js';
import { applySendEmailCopy } from './console-support.js';

/**
 * An admin's account does the setting up: the world's first admin is set up (its confirming
 * admins, test/support/operators.ts), so the bootstrap token changes no decider any more.
 */
const SETUP_ADMIN = operator('test-setup', ['admin']);

let browser: Browser;
let gw: ConsoleGateway;
const clients: Client[] = [];
const alice = operator('alice', ['approver']);
const XSS_DESCRIPTION =
  'Announce a change to one customer. <img src=x onerror="alert(\'description\')"><script>alert("d2")</script>';
const XSS_BODY = '<script>alert("argument")</script><img src=x onerror=alert(1)>';

before(async () => {
  [browser, gw] = await Promise.all([launchChromium(), startConsoleGateway()]);
});

after(async () => {
  for (const c of clients) await closeMcpClient(c);
  await browser?.close();
  await gw?.close();
});

async function pendingSend(to: string): Promise<string> {
  const client = await mcpClient(gw.base, gw.supportKey);
  clients.push(client);
  const result = await client.callTool({
    name: 'send_email',
    arguments: { to, subject: 'Hello', body: 'Hi.' },
  });
  return String(decisionOf(result).approval_id);
}

/** A page on another port of 127.0.0.1 (another origin, the same site) that posts at once. */
async function attackerSite(html: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(html);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

test('every console response carries the strict headers; the session cookie is __Host-, HttpOnly, Secure, Strict', async () => {
  const { context, page } = await signedInContext(browser, gw, operator('amy', ['approver']));
  try {
    const res = await page.goto(`${gw.base}/console/inbox`);
    const h = res?.headers() ?? {};
    assert.equal(h['content-security-policy'], CONTENT_SECURITY_POLICY);
    assert.equal(h['x-frame-options'], 'DENY');
    assert.equal(h['x-content-type-options'], 'nosniff');
    assert.equal(h['referrer-policy'], 'no-referrer');
    assert.equal(h['cache-control'], 'no-store');
    const login = await fetch(`${gw.base}/console/login`);
    assert.equal(login.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY);
    // The one script and stylesheet: content-hashed paths, cached for a year, same headers.
    const script = await page.locator('script[src]').getAttribute('src');
    assert.match(script ?? '', /^\/console\/assets\/console\.[0-9a-f]{16}\.js$/);
    const asset = await fetch(`${gw.base}${script}`);
    assert.equal(asset.status, 200);
    assert.match(asset.headers.get('cache-control') ?? '', /max-age=31536000, immutable/);
    assert.equal(asset.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(await page.locator('script:not([src])').count(), 0, 'no inline script');
    const cookie = await sessionCookie(context);
    assert.ok(cookie, 'chromium accepts the Secure cookie on http://127.0.0.1');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.secure, true);
    assert.equal(cookie.sameSite, 'Strict');
    assert.equal(cookie.path, '/');
    assert.equal(await page.evaluate('document.cookie'), '', 'no script can read it');
  } finally {
    await context.close();
  }
});

test('without a session: a page redirects to the login, a POST is refused with 401 and runs nothing', async () => {
  const id = await pendingSend('dee@customer.example');
  const page = await fetch(`${gw.base}/console/approvals/${id}`, { redirect: 'manual' });
  assert.equal(page.status, 303);
  assert.equal(page.headers.get('location'), '/console/login');
  const post = await fetch(`${gw.base}/console/approvals/${id}/approve`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: gw.base },
    body: '_csrf=x',
  });
  assert.equal(post.status, 401);
  assert.equal(((await post.json()) as { code: string }).code, 'UNAUTHENTICATED');
  const forged = await fetch(`${gw.base}/console/approvals/${id}/approve`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: gw.base,
      cookie: `${SESSION_COOKIE}=not-a-session`,
    },
    body: '_csrf=x',
  });
  assert.equal(forged.status, 401);
  assert.equal((await gw.tg.approvals.get(id)).status, 'pending');
});

/** The console form refusals recorded for `id`, as `actor via front: reason route`. */
async function formRefusals(id: string): Promise<string[]> {
  const events = await gw.tg.admin.events.list({ subject: `operator:${id}`, limit: 500 });
  return events
    .filter((e) => e.action === 'console.form_refused')
    .map((e) => {
      const d = (typeof e.details === 'string' ? JSON.parse(e.details) : e.details) as {
        reason: string;
        route: string;
      };
      return `${e.actor} via ${e.via}: ${d.reason} ${d.route}`;
    });
}

test('a POST with a missing or wrong CSRF token is refused and changes nothing; the right one works', async () => {
  const id = await pendingSend('eve@customer.example');
  const { context, page } = await signedInContext(browser, gw, operator('ann', ['approver']));
  try {
    await page.goto(`${gw.base}/console/approvals/${id}`);
    const token = await page.locator('#approve-form input[name=_csrf]').inputValue();
    // One character off (never the token itself, whatever its last character is).
    const offByOne = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
    for (const form of [{}, { _csrf: 'wrong' }, { _csrf: offByOne }]) {
      const res = await page.request.post(`${gw.base}/console/approvals/${id}/approve`, {
        form,
        headers: { origin: gw.base },
        maxRedirects: 0,
      });
      assert.equal(res.status(), 403, JSON.stringify(form));
      const body = (await res.json()) as { code: string; details: { reason: string } };
      assert.equal(body.code, 'CONSOLE_FORM_REFUSED');
      assert.equal(body.details.reason, 'csrf');
    }
    assert.equal((await gw.tg.approvals.get(id)).status, 'pending');
    // Each refusal is audited as the signed-in operator's, through the console.
    assert.deepEqual(
      await formRefusals('ann'),
      Array(3).fill('operator:ann via console: csrf /console/approvals/:id/approve'),
    );
    // Another session's token is no token of this one.
    const other = await signedInContext(browser, gw, operator('bob', ['approver']));
    await other.page.goto(`${gw.base}/console/approvals/${id}`);
    const bobsToken = await other.page.locator('#approve-form input[name=_csrf]').inputValue();
    await other.context.close();
    const crossed = await page.request.post(`${gw.base}/console/approvals/${id}/approve`, {
      form: { _csrf: bobsToken },
      headers: { origin: gw.base },
      maxRedirects: 0,
    });
    assert.equal(crossed.status(), 403);
    assert.equal((await gw.tg.approvals.get(id)).status, 'pending');

    await page.locator('#approve').click();
    await page.waitForURL(`**/console/approvals/${id}`);
    assert.equal((await gw.tg.approvals.get(id)).status, 'approved');
    // The benign post records no refusal: only the three above and the other session's token.
    assert.equal((await formRefusals('ann')).length, 4);
  } finally {
    await context.close();
  }
});

test('a cross-origin form post, even one carrying the right token, is refused and changes nothing', async () => {
  const id = await pendingSend('fay@customer.example');
  const { context, page } = await signedInContext(browser, gw, operator('ava', ['approver']));
  try {
    await page.goto(`${gw.base}/console/approvals/${id}`);
    // The worst case: the attacker somehow knows this session's token.
    const token = await page.locator('#approve-form input[name=_csrf]').inputValue();
    const site = await attackerSite(`<!doctype html><html><body>
<form id="f" method="post" action="${gw.base}/console/approvals/${id}/approve">
<input type="hidden" name="_csrf" value="${token}"></form>
<form id="g" method="post" action="${gw.base}/console/logout"><input type="hidden" name="_csrf" value="${token}"></form>
<script>document.getElementById('f').submit();</script></body></html>`);
    try {
      const attacked = await context.newPage();
      const posted = attacked.waitForResponse((r) => r.url().endsWith(`/${id}/approve`));
      await attacked.goto(site.url);
      const res = await posted;
      assert.equal(res.status(), 403);
      assert.equal(res.request().headers().origin, new URL(site.url).origin);
      assert.equal(
        ((await res.json()) as { details: { reason: string } }).details.reason,
        'cross_origin',
      );
      assert.equal((await gw.tg.approvals.get(id)).status, 'pending', 'nothing changed');
      assert.deepEqual(await formRefusals('ava'), [
        'operator:ava via console: cross_origin /console/approvals/:id/approve',
      ]);
      // The session is still there: the attack did not even log the operator out.
      await page.goto(`${gw.base}/console/inbox`);
      assert.equal(new URL(page.url()).pathname, '/console/inbox');
    } finally {
      await site.close();
    }
  } finally {
    await context.close();
  }
});

test('a passkey JSON request from another origin or without the token is refused and recorded as a form is; one from the console is answered and records nothing', async () => {
  const id = await pendingSend('pia@customer.example');
  const { context, page } = await signedInContext(browser, gw, operator('pia', ['approver']));
  try {
    await page.goto(`${gw.base}/console/approvals/${id}`);
    const token = await page
      .locator('form[action="/console/logout"] input[name=_csrf]')
      .inputValue();
    // A browser cannot send another site's JSON post here (a preflight for application/json,
    // 415 for a text/plain form spelling JSON): a client holding the cookie sends it, token too,
    // from another origin.
    const cross = await page.request.post(`${gw.base}/console/decisions/passkey-options`, {
      data: { _csrf: token, kind: 'approval', id },
      headers: { origin: 'http://127.0.0.1:9' },
    });
    assert.equal(cross.status(), 403);
    const crossBody = (await cross.json()) as { code: string; details: { reason: string } };
    assert.equal(crossBody.code, 'CONSOLE_FORM_REFUSED');
    assert.equal(crossBody.details.reason, 'cross_origin');
    // This origin, but a wrong token or none.
    for (const data of [{ _csrf: 'wrong' }, {}]) {
      const res = await page.request.post(`${gw.base}/console/passkeys/options`, {
        data,
        headers: { origin: gw.base },
      });
      assert.equal(res.status(), 403, JSON.stringify(data));
      const body = (await res.json()) as { code: string; details: { reason: string } };
      assert.equal(body.code, 'CONSOLE_FORM_REFUSED');
      assert.equal(body.details.reason, 'csrf');
    }
    // The logout form is checked, and its refusal recorded, by the same check.
    const logout = await page.request.post(`${gw.base}/console/logout`, {
      form: { _csrf: 'wrong' },
      headers: { origin: gw.base },
      maxRedirects: 0,
    });
    assert.equal(logout.status(), 403);
    const expected = [
      'operator:pia via console: cross_origin /console/decisions/passkey-options',
      'operator:pia via console: csrf /console/logout',
      'operator:pia via console: csrf /console/passkeys/options',
      'operator:pia via console: csrf /console/passkeys/options',
    ];
    assert.deepEqual((await formRefusals('pia')).sort(), expected);
    // The benign neighbour: the console's own request, at http://localhost (a browser's relying
    // party is never an IP address), with the session's token, is answered and records nothing.
    const local = gw.base.replace('://127.0.0.1:', '://localhost:');
    const cookie = await sessionCookie(context);
    assert.ok(cookie);
    const ok = await fetch(`${local}/console/passkeys/options`, {
      method: 'POST',
      headers: {
        origin: local,
        cookie: `${cookie.name}=${cookie.value}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ _csrf: token }),
    });
    assert.equal(ok.status, 200, await ok.clone().text());
    assert.equal(typeof ((await ok.json()) as { challenge?: unknown }).challenge, 'string');
    assert.deepEqual((await formRefusals('pia')).sort(), expected);
  } finally {
    await context.close();
  }
});

test('an XSS payload in a tool description and in an argument is shown as text; no script runs', async () => {
  await applySendEmailCopy(gw, { id: 'announce', name: 'announce', description: XSS_DESCRIPTION });
  // The scanner quarantines markup in a description; an admin releases it, so it reaches a
  // reviewer's screen as the registry holds it.
  await gw.tg.catalog.release('announce', '1.0.0', TEST_ADMIN, 'test: markup kept as data');
  // A restricted tool is a draft until its security review.
  await approvePendingReviews(gw.tg.admin);
  const client = await mcpClient(gw.base, gw.supportKey);
  clients.push(client);
  const result = await client.callTool({
    name: 'announce',
    arguments: { to: 'gil@customer.example', subject: XSS_BODY, body: XSS_BODY },
  });
  const id = String(decisionOf(result).approval_id);
  assert.match(id, /^apr_/, JSON.stringify(result));

  const { context, page } = await signedInContext(browser, gw, operator('abe', ['approver']));
  const script = watchForScript(page);
  try {
    await page.goto(`${gw.base}/console/inbox`);
    const res = await page.goto(`${gw.base}/console/approvals/${id}`);
    assert.equal(res?.headers()['content-security-policy'], CONTENT_SECURITY_POLICY);
    assert.equal((await page.locator('#description').textContent()) ?? '', XSS_DESCRIPTION);
    const args = JSON.parse((await page.locator('#arguments').textContent()) ?? '') as {
      body: string;
    };
    assert.equal(args.body, XSS_BODY);
    assert.equal(await page.locator('main img').count(), 0, 'no element was made from the text');
    assert.equal(await page.locator('main script').count(), 0);
    // Give an onerror handler time to fire, had one been made.
    await page.waitForTimeout(200);
    assert.deepEqual(script.events, []);
  } finally {
    await context.close();
  }
});

test('a wrong password gets the one generic message and no session; a login replaces the browser’s old session', async () => {
  await ensureOperator(gw, alice);
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await submitLogin(page, gw.base, 'alice', 'wrong password, long enough', '123456');
    assert.equal((await page.locator('#login-error').textContent()) ?? '', LOGIN_FAILED);
    await submitLogin(page, gw.base, 'nobody', TEST_PASSWORD, '123456');
    assert.equal(
      (await page.locator('#login-error').textContent()) ?? '',
      LOGIN_FAILED,
      'the same message',
    );
    assert.equal(await sessionCookie(context), undefined);

    // A failed attempt makes the account wait 1 s before the next (the login guard's backoff).
    await new Promise((r) => setTimeout(r, 1_100));
    await page.locator('#operator').fill('alice');
    await page.locator('#password').fill(TEST_PASSWORD);
    await page.locator('#totp').fill(await gw.code('alice'));
    await Promise.all([
      page.waitForURL('**/console/inbox'),
      page.locator('#login-form button').click(),
    ]);
    const first = (await sessionCookie(context))?.value ?? '';
    assert.ok(first.length >= 43, 'a 32-byte id');
    // Signing in again (same browser) gives a new id and ends the old session.
    await new Promise((r) => setTimeout(r, 1_100));
    const again = await page.request.post(`${gw.base}/console/login`, {
      form: { operator: 'alice', password: TEST_PASSWORD, totp: await gw.code('alice') },
      headers: { origin: gw.base },
      maxRedirects: 0,
    });
    assert.equal(again.status(), 303);
    const second = (await sessionCookie(context))?.value ?? '';
    assert.notEqual(second, first);
    assert.equal(await gw.tg.admin.consoleSessions.lookup(first), null, 'the old id is dead');
    assert.ok(await gw.tg.admin.consoleSessions.lookup(second));
    // A login form posted from another origin signs nobody in.
    const crossed = await fetch(`${gw.base}/console/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: 'http://127.0.0.1:1',
      },
      body: new URLSearchParams({
        operator: 'alice',
        password: TEST_PASSWORD,
        totp: '123456',
      }),
    });
    assert.equal(crossed.status, 403);
    assert.equal(crossed.headers.get('set-cookie'), null);
    // Nobody is signed in: the refusal is recorded as the console's sign-in's, with its route
    // (sampled per peer, since anyone may send one). The passkey sign-in's options alike.
    const passkeyCrossed = await fetch(`${gw.base}/console/login/passkey-options`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://127.0.0.1:1' },
      body: '{}',
    });
    assert.equal(passkeyCrossed.status, 403);
    const signInRefusals = (
      await gw.tg.admin.events.list({ subject: 'console:sign-in', limit: 50 })
    )
      .filter((e) => e.action === 'console.form_refused')
      .map((e) => {
        const d = (typeof e.details === 'string' ? JSON.parse(e.details) : e.details) as {
          reason: string;
          route: string;
        };
        return `${d.reason} ${d.route}`;
      });
    assert.deepEqual(signInRefusals.sort(), [
      'cross_origin /console/login',
      'cross_origin /console/login/passkey-options',
    ]);
  } finally {
    await context.close();
  }
});

test('a wrong or reused TOTP code gets the same generic message and no session', async () => {
  const tess = operator('tess', ['approver']);
  await ensureOperator(gw, tess);
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const good = await gw.code('tess');
    const wrong = good === '000000' ? '000001' : '000000';
    await submitLogin(page, gw.base, 'tess', TEST_PASSWORD, wrong);
    assert.equal((await page.locator('#login-error').textContent()) ?? '', LOGIN_FAILED);
    assert.equal(await sessionCookie(context), undefined);
    // Both guards back off after a failure: 1 s before the next attempt.
    await new Promise((r) => setTimeout(r, 1_100));
    await submitLogin(page, gw.base, 'tess', TEST_PASSWORD, good);
    assert.equal(new URL(page.url()).pathname, '/console/inbox');
    await context.clearCookies();
    await new Promise((r) => setTimeout(r, 1_100));
    await submitLogin(page, gw.base, 'tess', TEST_PASSWORD, good);
    assert.equal(
      (await page.locator('#login-error').textContent()) ?? '',
      LOGIN_FAILED,
      'a used code is refused like a wrong one',
    );
    assert.equal(await sessionCookie(context), undefined);
  } finally {
    await context.close();
  }
});

test('a disabled account cannot log in, with the right password and code', async () => {
  const dora = operator('dora', ['approver']);
  await ensureOperator(gw, dora);
  await gw.tg.admin.operators.update(SETUP_ADMIN, 'dora', { disabled: true });
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await submitLogin(page, gw.base, 'dora', TEST_PASSWORD, await gw.code('dora'));
    assert.equal((await page.locator('#login-error').textContent()) ?? '', LOGIN_FAILED);
    assert.equal(await sessionCookie(context), undefined);
    const events = await gw.tg.admin.events.list({ subject: 'operator:dora', limit: 20 });
    assert.ok(!events.some((e) => e.action === 'operator.logged_in'));
  } finally {
    await context.close();
  }
});

test('logout ends the session for good: the old cookie replayed gets the login page', async () => {
  const { context, page } = await signedInContext(browser, gw, operator('ali', ['approver']));
  try {
    const secret = (await sessionCookie(context))?.value ?? '';
    await Promise.all([page.waitForURL('**/console/login'), page.locator('header button').click()]);
    assert.equal(await sessionCookie(context), undefined);
    const replay = await fetch(`${gw.base}/console/inbox`, {
      redirect: 'manual',
      headers: { cookie: `${SESSION_COOKIE}=${secret}` },
    });
    assert.equal(replay.status, 303);
    assert.equal(replay.headers.get('location'), '/console/login');
  } finally {
    await context.close();
  }
});

test('an idle session times out and the next page is the login', async () => {
  const short = await startConsoleGateway({ console: { idleMs: 1_000 } });
  try {
    const { context, page } = await signedInContext(browser, short, alice);
    try {
      await page.goto(`${short.base}/console/inbox`);
      assert.equal(new URL(page.url()).pathname, '/console/inbox');
      // Past the idle timeout (a lower bound: any slowness only adds idle time).
      await new Promise((r) => setTimeout(r, 1_300));
      await page.goto(`${short.base}/console/inbox`);
      assert.equal(new URL(page.url()).pathname, '/console/login');
    } finally {
      await context.close();
    }
  } finally {
    await short.close();
  }
});
