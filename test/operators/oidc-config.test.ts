/**
 * @module Single sign-on configuration: checked whole at start with every problem named, from
 * the TOOLGATE_OIDC_* environment; insecure choices (plain http to a remote issuer or loopback
 * without the admin's outbound setting, HS256 or none, a role that does not exist) are refused,
 * their safe neighbours accepted.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isToolgateError } from '../../src/core/index.js';
import { oidcConfigFromEnv, resolveOidcConfig } from '../../src/domain/operators/oidc/index.js';
import { openOidcLogin } from '../../src/host/toolgate.js';

const base = {
  issuer: 'https://id.example.com/realms/main',
  clientId: 'toolgate',
  redirectUri: 'https://toolgate.example.com/console/login/oidc/callback',
};

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    assert.ok(isToolgateError(err) && err.code === 'INPUT_INVALID', String(err));
    const details = err.details as { problems: { pointer: string }[] };
    return details.problems.map((p) => p.pointer);
  }
  assert.fail('accepted');
}

test('defaults: openid profile email, roles and groups claims, asymmetric algorithms', () => {
  const c = resolveOidcConfig(base);
  assert.deepEqual(c.scopes, ['openid', 'profile', 'email']);
  assert.equal(c.rolesClaim, 'roles');
  assert.equal(c.teamsClaim, 'groups');
  assert.deepEqual(c.allowedAlgs, ['RS256', 'PS256', 'ES256', 'EdDSA']);
  assert.equal(c.clientSecret, undefined);
});

test('plain http is refused for a remote issuer, and loopback only with the admin setting', async () => {
  // The configuration holds a URL; where it may point is the outbound rules', at openOidcLogin.
  const remote = resolveOidcConfig({ ...base, issuer: 'http://id.example.com' });
  const loopback = resolveOidcConfig({ ...base, issuer: 'http://127.0.0.1:9000' });
  const refusal = async (config: typeof remote, outbound: { allowLoopback?: boolean }) => {
    try {
      await openOidcLogin(config, outbound);
    } catch (err) {
      assert.ok(isToolgateError(err) && err.code === 'INPUT_INVALID', String(err));
      const { problems } = err.details as { problems: { pointer: string; rule: string }[] };
      return problems.map((p) => [p.pointer, p.rule]);
    }
    return [];
  };
  assert.deepEqual(await refusal(remote, {}), [['/issuer', 'egress.scheme']]);
  assert.deepEqual(await refusal(remote, { allowLoopback: true }), [['/issuer', 'egress.scheme']]);
  assert.deepEqual(await refusal(loopback, {}), [['/issuer', 'egress.address_forbidden']]);
  assert.deepEqual(await refusal(loopback, { allowLoopback: true }), []);
  assert.deepEqual(
    problemsOf(() => resolveOidcConfig({ ...base, issuer: 'https://user:pw@id.example.com' })),
    ['/issuer'],
  );
});

test('none and HS* are never allowed algorithms; an unknown role in the map is refused; all listed at once', () => {
  assert.deepEqual(
    problemsOf(() =>
      resolveOidcConfig({
        ...base,
        allowedAlgs: ['RS256', 'none', 'HS256'],
        roleMap: { ops: 'superuser', reviewers: 'approver' },
        scopes: ['profile'],
        rolesClaim: 'a..b',
      }),
    ),
    ['/scopes', '/rolesClaim', '/roleMap/ops', '/allowedAlgs', '/allowedAlgs'],
  );
  assert.deepEqual(resolveOidcConfig({ ...base, roleMap: { reviewers: 'approver' } }).roleMap, {
    reviewers: 'approver',
  });
});

test('from the environment: off without an issuer, the redirect under the public URL, the secret from a file', () => {
  assert.equal(oidcConfigFromEnv({}, 'https://tg.example.com'), null);
  assert.throws(
    () => oidcConfigFromEnv({ TOOLGATE_OIDC_CLIENT_ID: 'x' }, 'https://tg.example.com'),
    /without TOOLGATE_OIDC_ISSUER/,
  );
  const dir = mkdtempSync(join(tmpdir(), 'tg-oidc-'));
  writeFileSync(join(dir, 'secret'), 's3cret-value\n');
  const c = oidcConfigFromEnv(
    {
      TOOLGATE_OIDC_ISSUER: base.issuer,
      TOOLGATE_OIDC_CLIENT_ID: 'toolgate',
      TOOLGATE_OIDC_CLIENT_SECRET_FILE: join(dir, 'secret'),
      TOOLGATE_OIDC_ROLES_CLAIM: 'realm_access.roles',
      TOOLGATE_OIDC_ROLE_MAP: '{"tg-admins":"admin"}',
    },
    'https://tg.example.com/',
  );
  assert.equal(c?.redirectUri, 'https://tg.example.com/console/login/oidc/callback');
  assert.equal(c?.clientSecret, 's3cret-value');
  assert.equal(c?.rolesClaim, 'realm_access.roles');
  assert.deepEqual(c?.roleMap, { 'tg-admins': 'admin' });
  const env = { TOOLGATE_OIDC_ISSUER: base.issuer, TOOLGATE_OIDC_CLIENT_ID: 'toolgate' };
  assert.throws(
    () => oidcConfigFromEnv({ ...env, TOOLGATE_OIDC_ROLE_MAP: '{nope' }, 'https://tg.example.com'),
    /not JSON/,
  );
  assert.throws(
    () =>
      oidcConfigFromEnv({ ...env, TOOLGATE_OIDC_ROLE_MAP: '["admin"]' }, 'https://tg.example.com'),
    /JSON object/,
  );
  assert.throws(
    () => oidcConfigFromEnv({ TOOLGATE_OIDC_ISSUER: base.issuer }, 'https://tg.example.com'),
    /CLIENT_ID is required/,
  );
  assert.throws(
    () =>
      oidcConfigFromEnv(
        {
          ...env,
          TOOLGATE_OIDC_CLIENT_SECRET: 'a',
          TOOLGATE_OIDC_CLIENT_SECRET_FILE: join(dir, 'secret'),
        },
        'https://tg.example.com',
      ),
    /not both/,
  );
});
