/**
 * The URLs a gateway's configuration makes it fetch or send to — reviewer and alert webhooks,
 * JWKS URLs, the token-exchange endpoint, the OpenID issuer — are checked at start under the
 * outbound rules, resolved: loopback, private and metadata addresses are refused without the
 * admin's setting (also when a name resolves to them), with INPUT_INVALID at the key; loopback
 * opens with it. An OpenID provider whose discovery names a forbidden token endpoint is refused.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { isToolgateError } from '../../src/core/index.js';
import { parseOAuthConfig } from '../../src/identity/index.js';
import { resolveOidcConfig } from '../../src/operators/oidc/index.js';
import type { Resolver } from '../../src/sandbox/egress/resolver.js';
import { openGateway, openOidcLogin } from '../../src/toolgate.js';
import { startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.js';

// Names a test DNS answers: one public, one that points at loopback, one at the metadata address.
const resolver: Resolver = async (host) => {
  if (host === 'idp.example.com') return [{ address: '93.184.216.34', family: 4 }];
  if (host === 'sneaky.example.com') return [{ address: '127.0.0.1', family: 4 }];
  if (host === 'meta.example.com') return [{ address: '169.254.169.254', family: 4 }];
  throw new Error('no such host');
};

let dir: string;
let n = 0;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-outbound-endpoints-'));
});

const oauth = (jwksUrl: string, tokenEndpoint?: string) =>
  parseOAuthConfig({
    resource: 'https://toolgate.test/mcp',
    issuers: [{ issuer: 'https://idp.example.com', jwksUrl }],
    clients: { c: 'support-bot' },
    scopes: { s: ['tickets:read'] },
    ...(tokenEndpoint
      ? {
          tokenExchange: {
            tokenEndpoint,
            clientId: 'toolgate',
            clientSecretFile: join(dir, 'secret'),
            tools: {},
          },
        }
      : {}),
  });

async function refusedAt(
  options: Parameters<typeof openGateway>[0],
  pointer: string,
  rule: string,
): Promise<void> {
  await assert.rejects(
    openGateway({ db: `sqlite:${join(dir, `g${++n}.db`)}`, ...options }),
    (err) => {
      assert.ok(isToolgateError(err), String(err));
      assert.equal(err.code, 'INPUT_INVALID');
      const problems = (err.details as { problems: { pointer: string; rule: string }[] }).problems;
      assert.deepEqual(
        problems.map((p) => [p.pointer, p.rule]),
        [[pointer, rule]],
      );
      return true;
    },
  );
}

test('a reviewer webhook on loopback, private or metadata addresses stops the start', async () => {
  for (const url of [
    'http://127.0.0.1:9/hook',
    'http://localhost:9/hook',
    'https://sneaky.example.com/hook',
  ]) {
    await refusedAt(
      { outbound: { resolver }, notify: { webhookUrls: [url] } },
      '/notify/webhookUrls/0',
      'egress.address_forbidden',
    );
  }
  await refusedAt(
    { outbound: { resolver }, notify: { webhookUrls: ['https://meta.example.com/hook'] } },
    '/notify/webhookUrls/0',
    'egress.metadata_address',
  );
  // Loopback with the admin's setting; a public name without it.
  for (const outbound of [{ resolver, allowLoopback: true }, { resolver }] as const) {
    const url = outbound.allowLoopback ? 'http://127.0.0.1:9/hook' : 'https://idp.example.com/h';
    const tg = await openGateway({
      db: `sqlite:${join(dir, `g${++n}.db`)}`,
      outbound,
      notify: { webhookUrls: [url] },
    });
    await tg.close();
  }
});

test('the detectors alert webhook is checked under the same rules at start', async () => {
  await refusedAt(
    {
      outbound: { resolver },
      detectors: {
        webhook: { url: 'https://sneaky.example.com/a', allow_hosts: ['sneaky.example.com'] },
      },
    },
    '/detectors/webhook/url',
    'egress.address_forbidden',
  );
  const tg = await openGateway({
    db: `sqlite:${join(dir, `g${++n}.db`)}`,
    outbound: { resolver },
    detectors: { webhook: { url: 'https://idp.example.com/a', allow_hosts: ['idp.example.com'] } },
  });
  await tg.close();
});

test('OAuth JWKS and token-exchange endpoints on forbidden addresses stop the start', async () => {
  await refusedAt(
    { outbound: { resolver }, oauth: oauth('https://sneaky.example.com/jwks') },
    '/oauth/issuers/0/jwksUrl',
    'egress.address_forbidden',
  );
  await refusedAt(
    { outbound: { resolver }, oauth: oauth('http://127.0.0.1:9/jwks') },
    '/oauth/issuers/0/jwksUrl',
    'egress.address_forbidden',
  );
  await refusedAt(
    {
      outbound: { resolver },
      oauth: oauth('https://idp.example.com/jwks', 'https://meta.example.com/token'),
    },
    '/oauth/tokenExchange/tokenEndpoint',
    'egress.metadata_address',
  );
  const tg = await openGateway({
    db: `sqlite:${join(dir, `g${++n}.db`)}`,
    outbound: { resolver, allowLoopback: true },
    oauth: oauth('http://127.0.0.1:9/jwks'),
  });
  await tg.close();
});

let op: TestOidcProvider;
after(() => op?.close());

test('an OpenID issuer on loopback needs the admin setting; discovery names no forbidden endpoint', async () => {
  op = await startOidcProvider({ accounts: {}, clients: [] } as unknown as Parameters<
    typeof startOidcProvider
  >[0]);
  const config = resolveOidcConfig({
    issuer: op.issuer,
    clientId: 'toolgate',
    clientSecret: 'secret',
    redirectUri: 'https://toolgate.test/console/login/oidc/callback',
  });
  await assert.rejects(openOidcLogin(config, {}), (err) => {
    assert.ok(isToolgateError(err));
    assert.equal(err.code, 'INPUT_INVALID');
    return true;
  });
  const login = await openOidcLogin(config, { allowLoopback: true });
  const metadata = await login.metadata();
  assert.equal(metadata.issuer, op.issuer);
});
