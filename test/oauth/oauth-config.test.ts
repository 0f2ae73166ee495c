/**
 * The OAuth resource-server configuration is checked whole when toolgate starts: a wrong one is
 * refused with every problem located, never half-applied; the metadata URL and the challenge are
 * built as RFC 9728 and RFC 6750 say.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isToolgateError } from '../../src/core/index.js';
import {
  bearerChallenge,
  exchangeIssuer,
  parseOAuthConfig,
  protectedResourceMetadataUrl,
  scopesFor,
} from '../../src/domain/identity/index.js';
import { oauthConfigFromEnv } from '../../src/edge/cli/runtime-files.js';

const VALID = {
  resource: 'https://tg.example.com/mcp',
  issuers: [{ issuer: 'https://as.example.com', jwksUrl: 'https://as.example.com/jwks' }],
  clients: { 'host-app': 'support-bot' },
  scopes: { 'tickets.read': ['tickets:read'], 'tickets.write': ['tickets:write'] },
};

function problemsOf(input: unknown): string[] {
  try {
    parseOAuthConfig(input);
  } catch (err) {
    assert.ok(isToolgateError(err) && err.code === 'INPUT_INVALID');
    return (err.details as { problems: { pointer: string }[] }).problems.map((p) => p.pointer);
  }
  assert.fail('the configuration was accepted');
}

test('a valid configuration is accepted as given', () => {
  assert.deepEqual(parseOAuthConfig(VALID), VALID);
});

test('every problem is listed, located by pointer', () => {
  const pointers = problemsOf({
    ...VALID,
    resource: 'http://tg.example.com/mcp#x',
    issuers: [
      { issuer: 'http://as.example.com', jwksUrl: 'https://as.example.com/jwks' },
      { issuer: 'https://as2.example.com' },
    ],
    clients: {},
  });
  assert.deepEqual(pointers.sort(), ['/clients', '/issuers/0/issuer', '/issuers/1', '/resource']);
});

test('a scope mapped to a malformed capability, or an unknown field, is refused', () => {
  assert.deepEqual(problemsOf({ ...VALID, scopes: { s: ['Not A Capability'] } }), ['/scopes/s/0']);
  assert.deepEqual(problemsOf({ ...VALID, audience: 'x' }), ['']);
  assert.deepEqual(problemsOf({ ...VALID, algorithms: ['HS256'] }), ['/algorithms/0']);
});

test('the token endpoint belongs to one trusted issuer: named, or the only one trusted', () => {
  const exchange = {
    tokenEndpoint: 'https://as.example.com/token',
    clientId: 'toolgate',
    clientSecretFile: '/run/secret',
    tools: { api: { audience: 'https://api.example.com' } },
  };
  const two = [
    ...VALID.issuers,
    { issuer: 'https://as2.example.com', jwksUrl: 'https://as2.example.com/jwks' },
  ];
  // One issuer trusted: the endpoint is its own.
  assert.equal(
    exchangeIssuer(parseOAuthConfig({ ...VALID, tokenExchange: exchange })),
    VALID.issuers[0]?.issuer,
  );
  // Several: the configuration must say which, and name one of them.
  assert.deepEqual(problemsOf({ ...VALID, issuers: two, tokenExchange: exchange }), [
    '/tokenExchange/issuer',
  ]);
  assert.deepEqual(
    problemsOf({
      ...VALID,
      issuers: two,
      tokenExchange: { ...exchange, issuer: 'https://as3.example.com' },
    }),
    ['/tokenExchange/issuer'],
  );
  const named = parseOAuthConfig({
    ...VALID,
    issuers: two,
    tokenExchange: { ...exchange, issuer: 'https://as2.example.com' },
  });
  assert.equal(exchangeIssuer(named), 'https://as2.example.com');
});

test('token exchange needs a secure endpoint and an upstream per tool', () => {
  const exchange = {
    tokenEndpoint: 'https://as.example.com/token',
    clientId: 'toolgate',
    clientSecretFile: '/run/secret',
    tools: { api: { audience: 'https://api.example.com' } },
  };
  assert.ok(parseOAuthConfig({ ...VALID, tokenExchange: exchange }).tokenExchange);
  assert.deepEqual(
    problemsOf({
      ...VALID,
      // Plain http to a remote host is the outbound rules' to refuse when the gateway opens
      // (test/oauth/outbound-endpoints.test.ts); here, a URL with credentials is not one at all.
      tokenExchange: { ...exchange, tokenEndpoint: 'https://u:p@as.example.com/t' },
    }),
    ['/tokenExchange/tokenEndpoint'],
  );
  assert.deepEqual(problemsOf({ ...VALID, tokenExchange: { ...exchange, tools: { api: {} } } }), [
    '/tokenExchange/tools/api',
  ]);
  assert.deepEqual(
    problemsOf({ ...VALID, tokenExchange: { ...exchange, tools: { api: { scope: 'x' } } } }),
    ['/tokenExchange/tools/api'],
  );
});

test('TOOLGATE_OAUTH_CONFIG names a YAML or JSON file; a bad one stops the start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-oauth-config-'));
  try {
    assert.equal(oauthConfigFromEnv({}), null);
    const good = join(dir, 'oauth.yaml');
    writeFileSync(
      good,
      [
        'resource: https://tg.example.com/mcp',
        'issuers: [{ issuer: "https://as.example.com", jwksUrl: "https://as.example.com/jwks" }]',
        'clients: { host-app: support-bot }',
        'scopes: { tickets.read: [ "tickets:read" ] }',
      ].join('\n'),
    );
    assert.equal(
      oauthConfigFromEnv({ TOOLGATE_OAUTH_CONFIG: good })?.clients['host-app'],
      'support-bot',
    );
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ ...VALID, issuers: [] }));
    assert.throws(
      () => oauthConfigFromEnv({ TOOLGATE_OAUTH_CONFIG: bad }),
      /OAuth configuration is invalid/,
    );
    assert.throws(
      () => oauthConfigFromEnv({ TOOLGATE_OAUTH_CONFIG: join(dir, 'missing') }),
      /cannot read/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the metadata URL puts the well-known segment before the resource path (RFC 9728 §3.1)', () => {
  assert.equal(
    protectedResourceMetadataUrl('https://tg.example.com/mcp'),
    'https://tg.example.com/.well-known/oauth-protected-resource/mcp',
  );
  assert.equal(
    protectedResourceMetadataUrl('https://tg.example.com/'),
    'https://tg.example.com/.well-known/oauth-protected-resource',
  );
});

test('a challenge escapes what it quotes; step-up names the fewest scopes that cover', () => {
  assert.equal(
    bearerChallenge({ resourceMetadata: 'https://x/"y', error: 'invalid_token' }),
    'Bearer resource_metadata="https://x/\\"y", error="invalid_token"',
  );
  assert.deepEqual(scopesFor(VALID, ['tickets:write']), ['tickets.write']);
  assert.deepEqual(scopesFor(VALID, ['tickets:read', 'tickets:write']), [
    'tickets.read',
    'tickets.write',
  ]);
  assert.equal(scopesFor(VALID, ['iam:grant']), null);
});
