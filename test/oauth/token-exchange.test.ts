/**
 * No token passes through to an upstream. An http tool configured for OAuth token exchange
 * (RFC 8693) reaches its API with a token the real authorization server (oidc-provider) issued
 * for that API on behalf of the calling user — exchanged by toolgate as its own client, cached
 * until shortly before expiry — never with the caller's access token; the tokens appear in no
 * stored row. A session without a user access token gets no credential at all (fail closed).
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import Database from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { decodeJwt } from 'jose';
import type { Actor } from '../../src/core/index.js';
import { MasterKey, TokenExchanger } from '../../src/domain/credentials/index.js';
import { parseOAuthConfig } from '../../src/domain/identity/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { HttpToolRunner } from '../../src/execution/runtimes/index.js';
import { EgressProxy } from '../../src/execution/sandbox/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { ROOT } from '../support/cli.js';
import { tableResolver } from '../support/egress.js';
import { validSendTool } from '../support/tools.js';
import { LOOPBACK_OUTBOUND, loopbackFetch } from '../support/webhook-receiver.js';
import { type AuthorizationServer, startAuthorizationServer } from './authorization-server.js';
import { connectWithOAuth, TestOAuthClient } from './oauth-client.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const tlsDir = join(ROOT, 'test', 'fixtures', 'egress-tls');
const PUBLIC = 'https://toolgate.test';
const RESOURCE = `${PUBLIC}/mcp`;
const UPSTREAM = 'https://api.example.test';
const TARGET = '127.0.0.1:443';
const EXCHANGE_SECRET = 'toolgate-exchange-secret-0123456789abcdef';

let dir: string;
let as: AuthorizationServer;
/** Another authorization server toolgate trusts, whose tokens the exchange must never send to `as`. */
let other: AuthorizationServer;
let tg: Gateway;
let app: FastifyInstance;
let upstream: https.Server;
let base = '';
let apiKey = '';
const seen: (string | undefined)[] = [];
const STORED_SECRET = 'sk-catalog-api-0123456789abcdef';
const clients: Client[] = [];

const viaProxy: typeof fetch = (input, init) => {
  const url = input instanceof Request ? input.url : String(input);
  return fetch(url.startsWith(PUBLIC) ? base + url.slice(PUBLIC.length) : url, init);
};

function apiTool(id: string, secret = 'orders-api') {
  return validSendTool({
    id,
    name: id,
    description: 'Look up one order in the order API.',
    action_class: 'read',
    data_access: 'public',
    access_tier: 'public',
    approval: { mode: 'none' },
    required_capabilities: ['orders:read'],
    egress: { mode: 'constrained', hosts: ['api.example.test'] },
    runtime: { kind: 'http', base_url: `${UPSTREAM}/v1`, method: 'GET', path: '/orders/{order}' },
    credentials: { secret, inject: 'header', as: 'Authorization' },
    input_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['order'],
      properties: { order: { type: 'string', maxLength: 40 } },
    },
    output_schema: { type: 'object' },
  });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-exchange-'));
  as = await startAuthorizationServer({
    publicClients: ['support-client'],
    exchangeClients: { 'toolgate-exchange': EXCHANGE_SECRET },
    resources: { [RESOURCE]: 'orders.read', [UPSTREAM]: 'orders.api' },
  });
  other = await startAuthorizationServer({
    publicClients: ['support-client'],
    exchangeClients: {},
    resources: { [RESOURCE]: 'orders.read' },
  });
  upstream = https.createServer(
    {
      key: readFileSync(join(tlsDir, 'server.key')),
      cert: readFileSync(join(tlsDir, 'server.pem')),
    },
    (req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ order: req.url, status: 'shipped' }));
    },
  );
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const testPorts = { [TARGET]: (upstream.address() as AddressInfo).port };
  const resolver = tableResolver({ 'api.example.test': ['127.0.0.1'] });
  const secretFile = join(dir, 'exchange-secret');
  writeFileSync(secretFile, EXCHANGE_SECRET);
  chmodSync(secretFile, 0o600);
  tg = await openGateway({
    // The test authorization server listens on loopback: the admin's setting allows it.
    outbound: LOOPBACK_OUTBOUND,
    db: `sqlite:${join(dir, 'tg.db')}`,
    masterKey: MasterKey.generate(),
    egress: {
      proxy: new EgressProxy({ resolver, unsafeTestTargets: [TARGET], unsafeTestPorts: testPorts }),
      http: new HttpToolRunner({
        resolver,
        unsafeTestTargets: [TARGET],
        unsafeTestPorts: testPorts,
        unsafeTestCa: readFileSync(join(tlsDir, 'ca.pem'), 'utf8'),
      }),
    },
    oauth: parseOAuthConfig({
      resource: RESOURCE,
      issuers: [
        { issuer: as.issuer, jwksUrl: as.jwksUrl },
        { issuer: other.issuer, jwksUrl: other.jwksUrl },
      ],
      clients: { 'support-client': 'orders-bot' },
      scopes: { 'orders.read': ['orders:read'] },
      tokenExchange: {
        // The endpoint is `as`'s: only its tokens are exchanged there.
        issuer: as.issuer,
        tokenEndpoint: `${as.issuer}/token`,
        clientId: 'toolgate-exchange',
        clientSecretFile: secretFile,
        tools: {
          orders_api: { audience: UPSTREAM },
          // An upstream the AS does not know: it refuses the exchange.
          ledger_api: { audience: 'https://ledger.example.test' },
        },
      },
    }),
  });
  await tg.config.apply(
    [
      { kind: 'Tool', spec: apiTool('orders_api') },
      { kind: 'Tool', spec: apiTool('ledger_api') },
      { kind: 'Tool', spec: apiTool('catalog_api', 'catalog-key') },
      { kind: 'Agent', spec: { id: 'orders-bot', owner: 'qa' } },
      { kind: 'Grant', spec: { agent: 'orders-bot', capabilities: ['orders:read'] } },
      { kind: 'User', spec: { id: 'dana', permissions: ['orders:read'] } },
    ],
    admin,
  );
  await tg.secrets.set({ toolId: 'catalog_api', name: 'catalog-key' }, STORED_SECRET, admin);
  apiKey = (await tg.keys.issue('orders-bot', admin)).apiKey;
  app = await buildServer(tg, { adminToken: 'exchange-test-admin-token-0123456789abcdef' });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});

after(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await app?.close();
  await tg?.close();
  await as?.close();
  await other?.close();
  await new Promise<void>((r) => upstream.close(() => r()));
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

describe('token exchange for an upstream http tool', () => {
  test('the upstream sees a token exchanged for the user, never the caller’s; reused while fresh', async () => {
    const oauth = new TestOAuthClient('support-client', 'dana');
    const client = await connectWithOAuth(oauth, RESOURCE, viaProxy);
    clients.push(client);
    const original = oauth.tokens()?.access_token ?? '';
    assert.ok(original);

    for (const order of ['A-1', 'A-2']) {
      const result = (await client.callTool({
        name: 'orders_api',
        arguments: { order },
      })) as CallToolResult;
      assert.equal(result.isError ?? false, false, JSON.stringify(result));
    }
    assert.equal(seen.length, 2);
    for (const header of seen) {
      assert.ok(header?.startsWith('Bearer '));
      assert.ok(!header?.includes(original), 'the caller’s token never reaches the upstream');
    }
    const exchanged = (seen[0] ?? '').slice('Bearer '.length);
    const claims = decodeJwt(exchanged);
    assert.equal(claims.aud, UPSTREAM);
    assert.equal(claims.sub, 'dana');
    assert.equal(claims.iss, as.issuer);
    // One exchange served both calls (cached until shortly before expiry), by toolgate's client.
    assert.deepEqual(as.exchanges, [
      { client: 'toolgate-exchange', audience: UPSTREAM, subject: 'dana' },
    ]);
    assert.equal(seen[1], seen[0]);

    // Neither token is in any stored row (audit records, events, sessions…).
    const db = new Database(join(dir, 'tg.db'), { readonly: true });
    try {
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
        name: string;
      }[];
      for (const { name } of tables) {
        const rows = JSON.stringify(db.prepare(`SELECT * FROM "${name}"`).all());
        assert.ok(!rows.includes(original), `the caller’s token is in ${name}`);
        assert.ok(!rows.includes(exchanged), `the exchanged token is in ${name}`);
      }
    } finally {
      db.close();
    }
  });

  test('a tool not configured for exchange gets its own stored secret, not the caller’s token', async () => {
    const oauth = new TestOAuthClient('support-client', 'dana');
    const client = await connectWithOAuth(oauth, RESOURCE, viaProxy);
    clients.push(client);
    const before = seen.length;
    const result = (await client.callTool({
      name: 'catalog_api',
      arguments: { order: 'C-1' },
    })) as CallToolResult;
    assert.equal(result.isError ?? false, false, JSON.stringify(result));
    assert.deepEqual(seen.slice(before), [STORED_SECRET]);
  });

  test('an exchange the AS refuses runs nothing and falls back to nothing', async () => {
    const oauth = new TestOAuthClient('support-client', 'dana');
    const client = await connectWithOAuth(oauth, RESOURCE, viaProxy);
    clients.push(client);
    const before = seen.length;
    const result = (await client.callTool({
      name: 'ledger_api',
      arguments: { order: 'L-1' },
    })) as CallToolResult;
    assert.equal(result.isError, true);
    assert.match(JSON.stringify(result), /CREDENTIAL_UNAVAILABLE/);
    assert.doesNotMatch(JSON.stringify(result), /ledger\.example|invalid_target/);
    assert.equal(seen.length, before, 'the upstream was not called');
  });

  test('a session with no user access token (an API key) gets no credential, and nothing is sent', async () => {
    const before = seen.length;
    const open = await fetch(`${base}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ on_behalf_of: 'dana' }),
    });
    assert.equal(open.status, 201, await open.clone().text());
    const session = (await open.json()) as { id: string };
    const call = await fetch(`${base}/v1/sessions/${session.id}/calls`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tool: 'orders_api', arguments: { order: 'A-3' } }),
    });
    const body = (await call.json()) as { code?: string; rule?: string };
    assert.equal(body.code, 'CREDENTIAL_UNAVAILABLE', JSON.stringify(body));
    assert.equal(seen.length, before, 'the upstream was not called');
    assert.equal(
      as.exchanges.filter((e) => e.audience === UPSTREAM).length,
      1,
      'no exchange was attempted for it',
    );
  });
});

describe('a token goes only to its own issuer’s token endpoint', () => {
  async function callOrders(token: string, order: string) {
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const open = await fetch(`${base}/v1/sessions`, { method: 'POST', headers: auth, body: '{}' });
    assert.equal(open.status, 201, await open.clone().text());
    const session = (await open.json()) as { id: string };
    const call = await fetch(`${base}/v1/sessions/${session.id}/calls`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ tool: 'orders_api', arguments: { order } }),
    });
    return (await call.json()) as {
      code?: string;
      message?: string;
      details?: { rule?: string; call_id?: string };
    };
  }

  test('another trusted issuer’s token is refused with a structured, audited error and never sent', async () => {
    const foreign = await other.accessToken('fay', 'orders.read');
    const attempts = as.exchangeAttempts.length;
    const calls = seen.length;
    const refused = await callOrders(foreign, 'F-1');
    assert.equal(refused.code, 'CREDENTIAL_UNAVAILABLE', JSON.stringify(refused));
    assert.equal(refused.details?.rule, 'credentials.exchange_foreign_issuer');
    assert.equal(as.exchangeAttempts.length, attempts, 'nothing was sent to the token endpoint');
    assert.ok(!as.exchangeAttempts.includes(foreign));
    assert.equal(seen.length, calls, 'the upstream was not called');
    await tg.gate.flush();
    const audited = await tg.admin.auditRecords.search(
      { rule: 'credentials.exchange_foreign_issuer' },
      { limit: 10 },
    );
    assert.ok(
      audited.items.some(
        (r) => r.call_id === refused.details?.call_id && r.code === 'CREDENTIAL_UNAVAILABLE',
      ),
      'the refusal is in the audit log',
    );

    // Benign neighbour: a token of the endpoint's own issuer is exchanged as before.
    const own = await as.accessToken('gus', 'orders.read');
    const ok = (await callOrders(own, 'G-1')) as { code?: string; output?: unknown };
    assert.equal(ok.code, undefined, JSON.stringify(ok));
    assert.ok(as.exchangeAttempts.includes(own));
    assert.equal(seen.length, calls + 1);
  });
});

describe('the exchanger against the real AS', () => {
  test('reuses a token until shortly before it expires, then exchanges again', async () => {
    const oauth = new TestOAuthClient('support-client', 'erin');
    const client = await connectWithOAuth(oauth, RESOURCE, viaProxy);
    clients.push(client);
    const subject = { token: oauth.tokens()?.access_token ?? '', issuer: as.issuer };
    let now = Date.now();
    const exchanger = new TokenExchanger(
      {
        issuer: as.issuer,
        tokenEndpoint: `${as.issuer}/token`,
        clientId: 'toolgate-exchange',
        clientSecret: EXCHANGE_SECRET,
        tools: { orders_api: { audience: UPSTREAM } },
      },
      { now: () => now, fetch: loopbackFetch },
    );
    const count = () => as.exchanges.filter((e) => e.subject === 'erin').length;
    const first = await exchanger.exchange('orders_api', subject);
    assert.equal(await exchanger.exchange('orders_api', subject), first);
    assert.equal(count(), 1);
    now += (300 - 31) * 1000; // the AS's tokens live 300 s; the margin is 30 s
    assert.equal(await exchanger.exchange('orders_api', subject), first);
    now += 2000;
    await exchanger.exchange('orders_api', subject);
    assert.equal(count(), 2);
    // A wrong client secret is refused by the AS, and the error holds no token.
    const wrong = new TokenExchanger(
      {
        issuer: as.issuer,
        tokenEndpoint: `${as.issuer}/token`,
        clientId: 'toolgate-exchange',
        clientSecret: 'not-the-secret-0123456789',
        tools: { orders_api: { audience: UPSTREAM } },
      },
      { fetch: loopbackFetch },
    );
    await assert.rejects(wrong.exchange('orders_api', subject), (err: Error) => {
      assert.match(err.message, /refused: invalid_client/);
      assert.ok(!err.message.includes(subject.token));
      return true;
    });
  });
});
