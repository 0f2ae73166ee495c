/**
 * @module Single sign-on against a real OpenID provider (`oidc-provider` on 127.0.0.1): the code
 * flow with PKCE for a confidential and a public client, and each attack on it refused with a
 * specific reason while its benign neighbour signs in.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SignJWT, UnsecuredJWT } from 'jose';
import { isToolgateError } from '../../src/core/index.js';
import {
  OIDC_BROWSER_MESSAGE,
  type OidcConfigInput,
  type OidcFailure,
  OidcLogin,
  type PendingOidcLogin,
  resolveOidcConfig,
} from '../../src/domain/operators/oidc/index.js';
import { OutboundGuard } from '../../src/execution/sandbox/egress/index.js';
import { authorize, startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.js';
import { LOOPBACK_OUTBOUND } from '../support/webhook-receiver.js';

const REDIRECT = 'http://127.0.0.1:8080/console/login/oidc/callback';
const SECRET = 'confidential-client-secret-0123456789';

let op: TestOidcProvider;

before(async () => {
  op = await startOidcProvider({
    clients: [
      {
        client_id: 'toolgate',
        client_secret: SECRET,
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'client_secret_basic',
      },
      {
        client_id: 'toolgate-public',
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'none',
      },
    ],
    accounts: {
      alice: {
        name: 'Alice Approver',
        email: 'alice@example.test',
        email_verified: true,
        roles: ['toolgate-approvers', 'unknown-group'],
        groups: ['payments', 'search'],
      },
      kc: { name: 'Keycloak style', realm_access: { roles: ['auditor', 'offline_access'] } },
      nobody: { name: 'No Role', roles: ['staff'], groups: ['payments'] },
    },
  });
});

after(() => op.close());

function login(over: Partial<OidcConfigInput> = {}, options = {}): OidcLogin {
  return new OidcLogin(
    resolveOidcConfig({
      issuer: op.issuer,
      clientId: 'toolgate',
      clientSecret: SECRET,
      redirectUri: REDIRECT,
      roleMap: { 'toolgate-approvers': 'approver' },
      ...over,
    }),
    // The test provider listens on loopback: the admin's setting allows it here.
    { outbound: new OutboundGuard(LOOPBACK_OUTBOUND), ...options },
  );
}

const publicLogin = () =>
  login({
    clientId: 'toolgate-public',
    clientSecret: undefined,
    roleMap: undefined,
    rolesClaim: 'realm_access.roles',
  });

/** A fresh browser signs in `account` and comes back with the redirect's query. */
async function signIn(l: OidcLogin, account = 'alice') {
  const { url, pending } = await l.begin();
  op.signInAs = account;
  return { pending, query: await authorize(url, REDIRECT) };
}

/** The raw ID token of a finished flow, exchanged by hand (as a client would). */
async function idTokenOf(
  pending: PendingOidcLogin,
  query: Record<string, string>,
  client: { id: string; secret?: string },
): Promise<string> {
  const meta = (await (await fetch(`${op.issuer}/.well-known/openid-configuration`)).json()) as {
    token_endpoint: string;
  };
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    code: query.code ?? '',
    redirect_uri: REDIRECT,
    code_verifier: pending.codeVerifier,
  });
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (client.secret)
    headers.authorization = `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`;
  else body.set('client_id', client.id);
  const res = await fetch(meta.token_endpoint, { method: 'POST', headers, body });
  const doc = (await res.json()) as { id_token?: string };
  assert.ok(doc.id_token, `token endpoint answered ${res.status}`);
  return doc.id_token;
}

async function refused(p: Promise<unknown>, reason: OidcFailure): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(isToolgateError(err), String(err));
    assert.equal(err.code, 'OIDC_LOGIN_FAILED');
    assert.deepEqual(err.details, { reason });
    assert.notEqual(err.message, OIDC_BROWSER_MESSAGE);
    return true;
  });
}

describe('the code flow with PKCE', () => {
  test('a confidential client signs an operator in: roles through roleMap, teams from groups', async () => {
    const l = login();
    const { url, pending } = await l.begin();
    const u = new URL(url);
    assert.equal(u.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(u.searchParams.get('scope'), 'openid profile email');
    assert.equal(pending.state.length >= 43 && pending.nonce !== pending.state, true);
    assert.equal(pending.expiresAt - pending.createdAt, 10 * 60_000);
    assert.deepEqual(JSON.parse(JSON.stringify(pending)), pending, 'pending is plain data');
    op.signInAs = 'alice';
    const identity = await l.complete(pending, await authorize(url, REDIRECT));
    assert.deepEqual(identity, {
      issuer: op.issuer,
      subject: 'alice',
      name: 'Alice Approver',
      email: 'alice@example.test',
      roles: ['approver'],
      teams: ['payments', 'search'],
    });
  });

  test('a public client signs in with PKCE alone; a dotted roles claim; role names without a map', async () => {
    const l = publicLogin();
    const { pending, query } = await signIn(l, 'kc');
    const identity = await l.complete(pending, query);
    assert.deepEqual(identity.roles, ['auditor']);
    assert.deepEqual(identity.teams, []);
    assert.equal(identity.name, 'Keycloak style');
  });

  test('begin gives every login its own state, nonce and verifier', async () => {
    const l = login();
    const a = (await l.begin()).pending;
    const b = (await l.begin()).pending;
    assert.notEqual(a.state, b.state);
    assert.notEqual(a.nonce, b.nonce);
    assert.notEqual(a.codeVerifier, b.codeVerifier);
  });
});

describe('attacks on the flow, each beside its benign neighbour', () => {
  test('a wrong state is refused; the right one still completes afterwards', async () => {
    const l = login();
    const { pending, query } = await signIn(l);
    await refused(
      l.complete(pending, { ...query, state: `${pending.state.slice(1)}x` }),
      'state_mismatch',
    );
    const { state: _s, ...noState } = query;
    await refused(l.complete(pending, noState), 'state_mismatch');
    assert.equal((await l.complete(pending, query)).subject, 'alice');
  });

  test('a replayed callback is refused here, and its code by the provider on another replica', async () => {
    const l = login();
    const { pending, query } = await signIn(l);
    await l.complete(pending, query);
    await refused(l.complete(pending, query), 'state_replayed');
    // A replica that never saw this login: the provider refuses the used code itself.
    await refused(login().complete(pending, query), 'token_exchange');
  });

  test('a pending login with empty secrets matches nothing', async () => {
    const l = login();
    const { pending } = await l.begin();
    const blank = { ...pending, state: '', nonce: '', codeVerifier: '' };
    await refused(l.complete(blank, { state: '', code: 'x' }), 'state_mismatch');
  });

  test('an expired login is refused', async () => {
    const { pending, query } = await signIn(login());
    const late = login({}, { clock: () => new Date(pending.expiresAt + 1) });
    await refused(late.complete(pending, query), 'login_expired');
  });

  test('an ID token from another login (its nonce) is refused', async () => {
    const l = login();
    const a = await signIn(l);
    const b = await signIn(l);
    const tokenB = await idTokenOf(b.pending, b.query, { id: 'toolgate', secret: SECRET });
    await refused(l.verifyIdToken(tokenB, a.pending), 'nonce_mismatch');
    assert.equal((await l.verifyIdToken(tokenB, b.pending)).subject, 'alice');
  });

  test('an ID token whose audience is another client is refused', async () => {
    const pub = publicLogin();
    const { pending, query } = await signIn(pub, 'kc');
    const token = await idTokenOf(pending, query, { id: 'toolgate-public' });
    await refused(
      login({ roleMap: undefined, rolesClaim: 'realm_access.roles' }).verifyIdToken(token, pending),
      'id_token_invalid',
    );
    assert.deepEqual((await pub.verifyIdToken(token, pending)).roles, ['auditor']);
  });

  test('an expired ID token is refused; the same token in time is accepted', async () => {
    const l = login();
    const { pending, query } = await signIn(l);
    const token = await idTokenOf(pending, query, { id: 'toolgate', secret: SECRET });
    const twoHoursOn = login({}, { clock: () => new Date(Date.now() + 2 * 3_600_000) });
    await refused(twoHoursOn.verifyIdToken(token, pending), 'id_token_invalid');
    const notYet = login({}, { clock: () => new Date(Date.now() - 3_600_000) });
    await refused(notYet.verifyIdToken(token, pending), 'id_token_invalid');
    assert.equal((await l.verifyIdToken(token, pending)).subject, 'alice');
  });

  test('a tampered signature, alg none and an HS256 token keyed with the client secret are refused', async () => {
    const l = login();
    const { pending, query } = await signIn(l);
    const token = await idTokenOf(pending, query, { id: 'toolgate', secret: SECRET });
    const [h, p, s] = token.split('.') as [string, string, string];
    const flipped = `${h}.${p}.${s.slice(0, 10)}${s[10] === 'A' ? 'B' : 'A'}${s.slice(11)}`;
    await refused(l.verifyIdToken(flipped, pending), 'id_token_invalid');
    // The payload changed under the provider's signature: a role added.
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, roles: ['admin'] })).toString(
      'base64url',
    );
    await refused(
      login({ roleMap: undefined }).verifyIdToken(`${h}.${forged}.${s}`, pending),
      'id_token_invalid',
    );
    const none = new UnsecuredJWT(claims).encode();
    await refused(l.verifyIdToken(none, pending), 'id_token_invalid');
    const hs = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: 'test-key' })
      .sign(new TextEncoder().encode(SECRET));
    await refused(l.verifyIdToken(hs, pending), 'id_token_invalid');
    assert.equal((await l.verifyIdToken(token, pending)).subject, 'alice');
  });

  test('discovery naming another issuer is refused, as is a redirect naming another issuer', async () => {
    // The same provider reached as localhost: its document says 127.0.0.1, not the configured issuer.
    const other = login({ issuer: op.issuer.replace('127.0.0.1', 'localhost') });
    await refused(other.begin(), 'issuer_mismatch');
    const l = login();
    const { pending, query } = await signIn(l);
    assert.equal(query.iss, op.issuer, 'the provider names itself (RFC 9207)');
    await refused(
      l.complete(pending, { ...query, iss: 'https://evil.example' }),
      'issuer_mismatch',
    );
    // The provider says it always names itself: a response without iss is refused too. Each
    // refusal after the state matched uses the login up, so each case signs in afresh.
    const second = await signIn(l);
    const { iss: _iss, ...noIss } = second.query;
    await refused(l.complete(second.pending, noIss), 'issuer_mismatch');
    const third = await signIn(l);
    assert.equal((await l.complete(third.pending, third.query)).subject, 'alice');
  });

  test('a provider error is refused with its code in the log message only', async () => {
    const l = login();
    const { pending } = await l.begin();
    await assert.rejects(
      l.complete(pending, { state: pending.state, error: 'access_denied' }),
      (err: unknown) => isToolgateError(err) && err.message.includes('access_denied'),
    );
  });

  test('an identity without a mapped role is refused; a mapped one signs in', async () => {
    const l = login();
    const a = await signIn(l, 'nobody');
    await refused(l.complete(a.pending, a.query), 'no_role');
    // Values equal to role names give nothing once a roleMap is configured.
    const b = await signIn(login({ roleMap: { staff: 'owner' } }), 'nobody');
    const identity = await login({ roleMap: { staff: 'owner' } }).complete(b.pending, b.query);
    assert.deepEqual([identity.roles, identity.teams], [['owner'], ['payments']]);
  });
});
