/**
 * The URLs a gateway's configuration makes it fetch or send to — reviewer and alert webhooks,
 * JWKS URLs, the token-exchange endpoint, the OpenID issuer and every endpoint its discovery
 * document names — go under the outbound rules, resolved: loopback, private, metadata and
 * IPv6-embedded addresses are refused, by literal or by a name resolving there, with INPUT_INVALID
 * at the key and the egress rule; loopback (only loopback) opens with the admin's gateway-wide
 * setting; redirects are never followed. Names are answered by a test resolver (no DNS here).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { isToolgateError } from '../../src/core/index.js';
import { parseOAuthConfig } from '../../src/domain/identity/index.js';
import { OidcLogin, resolveOidcConfig } from '../../src/domain/operators/oidc/index.js';
import type { Resolver } from '../../src/execution/sandbox/egress/resolver.js';
import { OutboundGuard } from '../../src/execution/sandbox/index.js';
import { openGateway, openOidcLogin } from '../../src/host/toolgate.js';
import { startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.js';

// Names a test DNS answers: one public, the others pointing where nothing may go.
const resolver: Resolver = async (host) => {
  if (host === 'idp.example.com') return [{ address: '93.184.216.34', family: 4 }];
  if (host === 'sneaky.example.com') return [{ address: '127.0.0.1', family: 4 }];
  if (host === 'meta.example.com') return [{ address: '169.254.169.254', family: 4 }];
  if (host === 'private.example.com') return [{ address: '10.1.2.3', family: 4 }];
  if (host === 'mapped.example.com') return [{ address: '::ffff:169.254.169.254', family: 6 }];
  throw new Error('no such host');
};

/** Refused whatever the loopback setting: private, metadata and IPv6-embedded addresses. */
const NEVER: readonly (readonly [string, string])[] = [
  ['https://10.0.0.5/hook', 'egress.address_forbidden'],
  ['https://private.example.com/hook', 'egress.address_forbidden'],
  ['http://169.254.169.254/latest/meta-data', 'egress.metadata_address'],
  ['https://meta.example.com/hook', 'egress.metadata_address'],
  ['https://[::ffff:a9fe:a9fe]/hook', 'egress.metadata_address'],
  ['https://mapped.example.com/hook', 'egress.metadata_address'],
  ['https://[::ffff:127.0.0.1]/hook', 'egress.address_forbidden'],
  ['https://[64:ff9b::a9fe:a9fe]/hook', 'egress.metadata_address'],
  ['https://[2002:7f00:1::]/hook', 'egress.address_forbidden'],
  ['https://[::127.0.0.1]/hook', 'egress.address_forbidden'],
  ['https://[fd00:ec2::254]/hook', 'egress.metadata_address'],
  ['https://[fe80::1]/hook', 'egress.address_forbidden'],
  ['https://0.0.0.0/hook', 'egress.address_forbidden'],
  ['http://idp.example.com/hook', 'egress.scheme'],
  ['https://idp.example.com:8443/hook', 'egress.port'],
];
/** Loopback, by literal, by its name and by a name resolving there: only with the setting. */
const LOOPBACK: readonly string[] = [
  'http://127.0.0.1:9/hook',
  'http://127.1.2.3:9/hook',
  'http://0177.0.0.1:9/hook',
  'http://localhost:9/hook',
  'http://[::1]:9/hook',
  'https://sneaky.example.com/hook',
];

let dir: string;
let n = 0;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-outbound-endpoints-'));
  writeFileSync(join(dir, 'secret'), 'exchange-secret-0123456789', { mode: 0o600 });
});

const db = () => `sqlite:${join(dir, `g${++n}.db`)}`;

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
  await assert.rejects(openGateway({ db: db(), ...options }), (err) => {
    assert.ok(isToolgateError(err), String(err));
    assert.equal(err.code, 'INPUT_INVALID');
    const problems = (err.details as { problems: { pointer: string; rule: string }[] }).problems;
    assert.deepEqual(
      problems.map((p) => [p.pointer, p.rule]),
      [[pointer, rule]],
    );
    return true;
  });
}

async function opens(options: Parameters<typeof openGateway>[0]): Promise<void> {
  const tg = await openGateway({ db: db(), ...options });
  await tg.close();
}

test('a reviewer webhook on loopback, private, metadata or IPv6-embedded addresses stops the start', async () => {
  for (const url of LOOPBACK) {
    await refusedAt(
      { outbound: { resolver }, notify: { webhookUrls: [url] } },
      '/notify/webhookUrls/0',
      'egress.address_forbidden',
    );
    // Benign neighbour: the same URL with the admin's loopback setting.
    await opens({ outbound: { resolver, allowLoopback: true }, notify: { webhookUrls: [url] } });
  }
  for (const [url, rule] of NEVER) {
    for (const allowLoopback of [false, true]) {
      await refusedAt(
        { outbound: { resolver, allowLoopback }, notify: { webhookUrls: [url] } },
        '/notify/webhookUrls/0',
        rule,
      );
    }
  }
  // Benign neighbour: https to a public name, without any setting.
  await opens({ outbound: { resolver }, notify: { webhookUrls: ['https://idp.example.com/h'] } });
});

test('the detectors alert webhook is checked under the same rules at start, allow_hosts or not', async () => {
  const hostOf = (url: string) => new URL(url).hostname;
  for (const url of LOOPBACK) {
    const detectors = { webhook: { url, allow_hosts: [hostOf(url)] } };
    await refusedAt(
      { outbound: { resolver }, detectors },
      '/detectors/webhook/url',
      'egress.address_forbidden',
    );
    await opens({ outbound: { resolver, allowLoopback: true }, detectors });
  }
  for (const [url, rule] of NEVER) {
    // Listing a host in allow_hosts never lets it past the address rules.
    const detectors = { webhook: { url, allow_hosts: [hostOf(url)] } };
    await refusedAt(
      { outbound: { resolver, allowLoopback: true }, detectors },
      '/detectors/webhook/url',
      rule,
    );
  }
  await opens({
    outbound: { resolver },
    detectors: { webhook: { url: 'https://idp.example.com/a', allow_hosts: ['idp.example.com'] } },
  });
});

test('OAuth JWKS and token-exchange endpoints on forbidden addresses stop the start', async () => {
  for (const url of LOOPBACK) {
    await refusedAt(
      { outbound: { resolver }, oauth: oauth(url) },
      '/oauth/issuers/0/jwksUrl',
      'egress.address_forbidden',
    );
    await refusedAt(
      { outbound: { resolver }, oauth: oauth('https://idp.example.com/jwks', url) },
      '/oauth/tokenExchange/tokenEndpoint',
      'egress.address_forbidden',
    );
    await opens({ outbound: { resolver, allowLoopback: true }, oauth: oauth(url, url) });
  }
  for (const [url, rule] of NEVER) {
    await refusedAt(
      { outbound: { resolver, allowLoopback: true }, oauth: oauth(url) },
      '/oauth/issuers/0/jwksUrl',
      rule,
    );
    await refusedAt(
      {
        outbound: { resolver, allowLoopback: true },
        oauth: oauth('https://idp.example.com/jwks', url),
      },
      '/oauth/tokenExchange/tokenEndpoint',
      rule,
    );
  }
  await opens({
    outbound: { resolver },
    oauth: oauth('https://idp.example.com/jwks', 'https://idp.example.com/token'),
  });
});

let op: TestOidcProvider;
after(() => op?.close());

test('an OpenID issuer on loopback needs the admin setting', async () => {
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
    const { problems } = err.details as { problems: { pointer: string; rule: string }[] };
    assert.deepEqual(
      problems.map((p) => [p.pointer, p.rule]),
      [['/issuer', 'egress.address_forbidden']],
    );
    return true;
  });
  const login = await openOidcLogin(config, { allowLoopback: true });
  const metadata = await login.metadata();
  assert.equal(metadata.issuer, op.issuer);
});

describe('the endpoints a discovery document names', () => {
  /** A provider on 127.0.0.1 (a kernel-chosen port) whose discovery document a test writes. */
  let server: Server;
  let issuer: string;
  let document: (issuer: string) => unknown = () => ({});
  let status = 200;
  let location = '';
  /** Requests that reached the redirect target: a followed redirect would land here. */
  let elsewhere: Server;
  let elsewhereHits = 0;
  let elsewhereUrl: string;

  before(async () => {
    server = createServer((_req, res) => {
      if (status !== 200) {
        res.writeHead(status, { location }).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(document(issuer)));
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    elsewhere = createServer((_req, res) => {
      elsewhereHits += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(document(issuer)));
    });
    await new Promise<void>((ok) => elsewhere.listen(0, '127.0.0.1', ok));
    elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    elsewhere.closeAllConnections();
    await new Promise((ok) => server.close(ok));
    await new Promise((ok) => elsewhere.close(ok));
  });

  const config = () =>
    resolveOidcConfig({
      issuer,
      clientId: 'toolgate',
      clientSecret: 'secret',
      redirectUri: 'https://toolgate.test/console/login/oidc/callback',
    });
  const named = (endpoints: Record<string, string>) => (iss: string) => ({
    issuer: iss,
    authorization_endpoint: 'https://idp.example.com/authorize',
    token_endpoint: 'https://idp.example.com/token',
    jwks_uri: 'https://idp.example.com/jwks',
    code_challenge_methods_supported: ['S256'],
    ...endpoints,
  });
  const discoveryRefusal = async (login: OidcLogin): Promise<string> => {
    try {
      await login.metadata();
    } catch (err) {
      assert.ok(isToolgateError(err) && err.code === 'OIDC_LOGIN_FAILED', String(err));
      return err.message;
    }
    return 'accepted';
  };

  test('a jwks_uri, token or authorization endpoint on a private, metadata or embedded address is refused, even with loopback allowed', async () => {
    const login = await openOidcLogin(config(), { resolver, allowLoopback: true });
    for (const key of ['jwks_uri', 'token_endpoint', 'authorization_endpoint']) {
      for (const [url, rule] of NEVER) {
        document = named({ [key]: url });
        const why = await discoveryRefusal(login);
        assert.ok(why.includes(`${key} is refused (${rule})`), `${key} ${url}: ${why}`);
        // A refused document is not kept: the next request asks the provider again.
      }
      // Benign neighbour: the public name, and loopback, which this gateway's admin allowed.
      for (const url of ['https://idp.example.com/x', 'http://127.0.0.1:9/x']) {
        document = named({ [key]: url });
        const fresh = await openOidcLogin(config(), { resolver, allowLoopback: true });
        assert.equal(await discoveryRefusal(fresh), 'accepted', `${key} ${url}`);
      }
    }
  });

  test('a public issuer whose discovery names loopback is refused without the admin setting', async () => {
    // The issuer's document is fetched from 127.0.0.1 here (no public provider exists in a test);
    // every endpoint it names is judged by the gateway's own rules, which do not allow loopback.
    const strict = new OutboundGuard({ resolver });
    const transport = new OutboundGuard({ resolver, allowLoopback: true });
    const login = new OidcLogin(config(), {
      outbound: { problem: (url) => strict.problem(url), fetch: transport.fetch },
    });
    for (const key of ['jwks_uri', 'token_endpoint']) {
      for (const url of LOOPBACK) {
        document = named({ [key]: url });
        const why = await discoveryRefusal(login);
        assert.ok(
          why.includes(`${key} is refused (egress.address_forbidden)`),
          `${key} ${url}: ${why}`,
        );
      }
    }
    document = named({});
    assert.equal(await discoveryRefusal(login), 'accepted');
  });

  test('a redirect of the discovery document is not followed', async () => {
    document = named({});
    status = 302;
    location = `${elsewhereUrl}/.well-known/openid-configuration`;
    try {
      const login = await openOidcLogin(config(), { resolver, allowLoopback: true });
      assert.match(await discoveryRefusal(login), /answered HTTP 302/);
      assert.equal(elsewhereHits, 0);
    } finally {
      status = 200;
    }
    // Benign neighbour: the same provider answering itself.
    const login = await openOidcLogin(config(), { resolver, allowLoopback: true });
    assert.equal(await discoveryRefusal(login), 'accepted');
  });
});
