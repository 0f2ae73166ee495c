/**
 * Single sign-on leaves a trace either way (docs/agents-and-identity.md "Single sign-on"): a
 * completed one is `operator.logged_in` (`method: oidc`), as a local sign-in is, and every failed
 * one is `operator.sso_failed` with the check that refused it — a nonce mismatch, a replayed
 * callback, an identity without a role — never the code, the state or a token. The provider is
 * a stand-in for the relying party's two halves (the real one is test/console/console-oidc.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type OidcIdentity, oidcFailure } from '../../src/domain/operators/oidc/index.js';
import { LOGIN_COOKIE } from '../../src/edge/console/security.js';
import { eventDetails, openWorld, type World } from '../support/world.js';

const ISSUER = 'https://idp.example.test';
const SECRET_CODE = 'code-the-provider-sent-0123456789';
/** What the stand-in keeps between its halves (it checks nothing of it). */
const PENDING = {
  state: 's'.repeat(43),
  nonce: 'n'.repeat(43),
  codeVerifier: 'v'.repeat(43),
  redirectUri: 'http://127.0.0.1/console/login/oidc/callback',
  createdAt: 0,
  expiresAt: Number.MAX_SAFE_INTEGER,
};
let world: World;

function identity(subject: string, roles: OidcIdentity['roles']): OidcIdentity {
  return { issuer: ISSUER, subject, name: subject, roles, teams: [] };
}

before(async () => {
  world = await openWorld({
    inspector: true,
    rest: {
      sso: {
        begin: async () => ({ url: `${ISSUER}/authorize`, pending: PENDING }),
        complete: async (_pending, query) => {
          if (query.state === 'nonce') throw oidcFailure('nonce_mismatch', 'the nonce differs');
          if (query.state === 'norole') return identity('nobody', []);
          return identity('olivia', ['approver']);
        },
      },
    },
  });
});

after(() => world.close());

/** Begins a login and comes back to the callback with `state`; the status and the cookie used. */
async function signIn(state: string, cookie?: string) {
  let pending = cookie;
  if (pending === undefined) {
    const begun = await fetch(`${world.base}/console/login/oidc`, { redirect: 'manual' });
    assert.equal(begun.status, 303);
    const set = begun.headers.getSetCookie().find((c) => c.startsWith(`${LOGIN_COOKIE}=`));
    pending = (set ?? '').split(';')[0] ?? '';
  }
  const res = await fetch(
    `${world.base}/console/login/oidc/callback?code=${SECRET_CODE}&state=${state}`,
    { redirect: 'manual', headers: { cookie: pending } },
  );
  await res.text();
  return { status: res.status, cookie: pending };
}

async function events(action: string) {
  return eventDetails(world.inspector as NonNullable<World['inspector']>, action);
}

test('a completed single sign-on is audited as a local sign-in is', async () => {
  const ok = await signIn('good');
  assert.equal(ok.status, 200);
  assert.deepEqual(await events('operator.logged_in'), [{ method: 'oidc' }]);
  assert.deepEqual(await events('operator.sso_failed'), []);
});

test('every failed single sign-on is audited with its reason, never the code', async () => {
  assert.equal((await signIn('nonce')).status, 401);
  assert.equal((await signIn('norole')).status, 401);
  // The callback again with a login already taken: a replay.
  const used = await signIn('good');
  assert.equal(used.status, 200);
  assert.equal((await signIn('good', used.cookie)).status, 401);
  const failed = await events('operator.sso_failed');
  assert.deepEqual(
    failed.map((d) => d.reason),
    ['nonce_mismatch', 'no_role', 'login_expired'],
  );
  const rows = await (world.inspector as NonNullable<World['inspector']>).db
    .selectFrom('events')
    .select('details')
    .execute();
  assert.ok(!rows.some((r) => r.details.includes(SECRET_CODE)), 'the code is never recorded');
  assert.ok(
    !rows.some((r) => r.details.includes(used.cookie.split('=')[1] ?? '-')),
    'nor the login handle',
  );
});
