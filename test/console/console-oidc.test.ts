/**
 * Single sign-on in a real browser against a real OpenID provider (`oidc-provider` on
 * 127.0.0.1): "Sign in with single sign-on" runs the code flow with PKCE through the provider and
 * back to the console's callback on the gateway's real port; the operator lands in the console as
 * `oidc.<hash>` with the roles and teams the provider's claims map to. An identity without a
 * mapped role is refused with the one generic message and gets no session.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { oidcOperatorId } from '../../src/domain/operators/index.js';
import { OidcLogin, resolveOidcConfig } from '../../src/domain/operators/oidc/index.js';
import { SSO_FAILED } from '../../src/edge/console/index.js';
import { OutboundGuard } from '../../src/execution/sandbox/egress/index.js';
import {
  type ConsoleGateway,
  launchChromium,
  sessionCookie,
  startConsoleGateway,
} from '../support/browser.js';
import { startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.js';
import { LOOPBACK_OUTBOUND } from '../support/webhook-receiver.js';

const SECRET = 'confidential-client-secret-0123456789';

let browser: Browser;
let gw: ConsoleGateway;
let provider: TestOidcProvider | undefined;

before(async () => {
  [browser, gw] = await Promise.all([
    launchChromium(),
    // The provider knows the client's redirect URI, the callback on the gateway's port: both are
    // made once the gateway listens.
    startConsoleGateway({
      sso: async (base) => {
        const redirectUri = `${base}/console/login/oidc/callback`;
        provider = await startOidcProvider({
          clients: [
            {
              client_id: 'toolgate',
              client_secret: SECRET,
              redirect_uris: [redirectUri],
              token_endpoint_auth_method: 'client_secret_basic',
            },
          ],
          accounts: {
            olivia: {
              name: 'Olivia Approver',
              email: 'olivia@example.test',
              email_verified: true,
              roles: ['toolgate-approvers', 'unrelated-group'],
              groups: ['support-team'],
            },
            nobody: { name: 'No Role', roles: ['staff'], groups: ['support-team'] },
          },
        });
        return new OidcLogin(
          resolveOidcConfig({
            issuer: provider.issuer,
            clientId: 'toolgate',
            clientSecret: SECRET,
            redirectUri,
            rolesClaim: 'roles',
            teamsClaim: 'groups',
            roleMap: { 'toolgate-approvers': 'approver' },
          }),
          { outbound: new OutboundGuard(LOOPBACK_OUTBOUND) },
        );
      },
    }),
  ]);
});

after(async () => {
  await browser?.close();
  await gw?.close();
  await provider?.close();
});

function idp(): TestOidcProvider {
  assert.ok(provider, 'the provider runs');
  return provider;
}

test('single sign-on through the real provider lands in the console as oidc.<hash> with the mapped roles and teams', async () => {
  idp().signInAs = 'olivia';
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${gw.base}/console/login`);
    await Promise.all([page.waitForURL('**/console/inbox'), page.locator('#sso').click()]);
    assert.match((await page.locator('.who').textContent()) ?? '', /Olivia Approver \(approver\)/);
    const cookie = await sessionCookie(context);
    assert.ok(cookie);
    const session = await gw.tg.admin.consoleSessions.lookup(cookie.value);
    const id = oidcOperatorId(idp().issuer, 'olivia');
    assert.match(id, /^oidc\./);
    assert.equal(session?.operator.id, id);
    assert.deepEqual(session?.operator.roles, ['approver']);
    assert.deepEqual(session?.operator.teams, ['support-team']);
    const account = await gw.tg.admin.operators.get(id);
    assert.equal(account.kind, 'oidc');
    assert.deepEqual(account.roles, ['approver']);
  } finally {
    await context.close();
  }
});

test('an identity whose claims map to no role is refused with the generic single sign-on message and no session', async () => {
  idp().signInAs = 'nobody';
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${gw.base}/console/login`);
    await Promise.all([
      page.waitForURL('**/console/login/oidc/callback**'),
      page.locator('#sso').click(),
    ]);
    assert.equal((await page.locator('#login-error').textContent()) ?? '', SSO_FAILED);
    assert.equal(await sessionCookie(context), undefined);
    await assert.rejects(gw.tg.admin.operators.get(oidcOperatorId(idp().issuer, 'nobody')));
  } finally {
    await context.close();
  }
});
