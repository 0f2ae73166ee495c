/**
 * toolgate as an OAuth 2.1 resource server (MCP authorization), against a real authorization
 * server (oidc-provider on 127.0.0.1) and the official SDK client doing the whole dance:
 * discovery from the 401, protected resource metadata, AS metadata, authorization code + PKCE
 * with a resource indicator, then list and call through the gate; scope step-up (403
 * insufficient_scope); and the tokens the gate must refuse, each beside a benign neighbour.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { Actor } from '../../src/core/index.js';
import { oauthUserId } from '../../src/domain/identity/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { initializeRequest, postMcp } from '../support/world.js';
import { type AuthorizationServer, startAuthorizationServer } from './authorization-server.js';
import { connectWithOAuth, connectWithOAuthV2, TestOAuthClient } from './oauth-client.js';
import { openSupportGateway } from './support-gateway.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const ADMIN_TOKEN = 'oauth-test-admin-token-0123456789abcdef';
/** toolgate's public URL (behind a proxy in production); `viaProxy` maps it to the listener. */
const PUBLIC = 'https://toolgate.test';
const RESOURCE = `${PUBLIC}/mcp`;
const OTHER_RESOURCE = 'https://other-api.test/';

let dir: string;
let as: AuthorizationServer;
let tg: Gateway;
let app: FastifyInstance;
let base = '';
const clients: { close(): Promise<void> }[] = [];

/** What a reverse proxy in front of toolgate does: the public origin reaches the listener. */
const viaProxy: typeof fetch = (input, init) => {
  const url = input instanceof Request ? input.url : String(input);
  const target = url.startsWith(PUBLIC) ? base + url.slice(PUBLIC.length) : url;
  return fetch(target, init);
};

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-oauth-'));
  as = await startAuthorizationServer({
    publicClients: ['support-client', 'stranger-client'],
    exchangeClients: {},
    resources: {
      [RESOURCE]: 'tickets.read',
      [OTHER_RESOURCE]: 'tickets.read tickets.write',
    },
  });
  tg = await openSupportGateway(dir, as, RESOURCE, admin);
  app = await buildServer(tg, { adminToken: ADMIN_TOKEN });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});

after(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await app?.close();
  await tg?.close();
  await as?.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

async function connect(oauth: TestOAuthClient): Promise<Client> {
  const client = await connectWithOAuth(oauth, RESOURCE, viaProxy);
  clients.push(client);
  return client;
}

async function mcpPost(token: string | null): Promise<Response> {
  return postMcp(base, initializeRequest(), token);
}

describe('discovery', () => {
  test('the protected resource metadata names this resource, the AS and the scopes', async () => {
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
    ]) {
      const res = await fetch(`${base}${path}`);
      assert.equal(res.status, 200, path);
      assert.deepEqual(await res.json(), {
        resource: RESOURCE,
        authorization_servers: [as.issuer],
        scopes_supported: ['iam.grant', 'tickets.read', 'tickets.write'],
        bearer_methods_supported: ['header'],
        resource_name: 'toolgate',
      });
    }
  });

  test('a 401 says where the metadata is; a refused token adds invalid_token', async () => {
    const none = await mcpPost(null);
    assert.equal(none.status, 401);
    assert.equal(
      none.headers.get('www-authenticate'),
      `Bearer resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource/mcp"`,
    );
    const bad = await mcpPost('not-a-token');
    assert.equal(bad.status, 401);
    assert.equal(
      bad.headers.get('www-authenticate'),
      `Bearer resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource/mcp", error="invalid_token"`,
    );
    // The agent REST routes challenge the same way.
    const rest = await fetch(`${base}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: 'Bearer nope', 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(rest.status, 401);
    assert.match(
      rest.headers.get('www-authenticate') ?? '',
      /resource_metadata=.*error="invalid_token"/,
    );
  });

  test('toolgate is not an authorization server: other well-known paths are a plain 404', async () => {
    for (const path of [
      '/.well-known/oauth-authorization-server',
      '/.well-known/openid-configuration',
      '/.well-known/oauth-protected-resource/other',
    ]) {
      const res = await fetch(`${base}${path}`);
      assert.equal(res.status, 404, path);
      const body = (await res.json()) as { code: string; message: string };
      assert.equal(body.code, 'NOT_FOUND');
      assert.doesNotMatch(body.message, /admin/i);
      assert.equal(res.headers.get('www-authenticate'), null);
    }
  });
});

describe('the OAuth dance with the SDK client', () => {
  test('discovers, authorizes with PKCE and a resource indicator, lists and calls through the gate', async () => {
    as.grantable.set(RESOURCE, 'tickets.read');
    const oauth = new TestOAuthClient('support-client', 'alice');
    const client = await connect(oauth);
    const [authorization] = oauth.authorizations;
    assert.ok(authorization);
    assert.equal(authorization.origin, as.issuer);
    assert.equal(authorization.searchParams.get('resource'), RESOURCE);
    assert.equal(authorization.searchParams.get('code_challenge_method'), 'S256');
    const token = oauth.tokens()?.access_token ?? '';
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString());
    assert.equal(claims.aud, RESOURCE);

    // The token's scope (tickets.read) narrows support-bot's grants to tickets and orders reads.
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(names, ['get_order', 'search_tickets']);
    const result = (await client.callTool({
      name: 'get_order',
      arguments: { order_id: 'ORD-004211' },
    })) as CallToolResult;
    assert.equal(result.isError ?? false, false);
    assert.match(JSON.stringify(result.structuredContent), /ORD-004211/);
  });

  test('a tool beyond the token scopes is a step-up: 403 insufficient_scope, the SDK asks again', async () => {
    as.grantable.set(RESOURCE, 'tickets.read');
    const oauth = new TestOAuthClient('support-client', 'bob');
    const client = await connect(oauth);
    const first = oauth.tokens()?.access_token ?? '';

    // Seen raw: the challenge names the scope to ask for.
    const raw = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${first}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'add_label', arguments: { ticket_id: 'T-1', label: 'bug' } },
      }),
    });
    assert.equal(raw.status, 403);
    assert.equal(
      raw.headers.get('www-authenticate'),
      `Bearer resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", scope="tickets.write"`,
    );
    const body = (await raw.json()) as { error: { data: { code: string; details: unknown } } };
    assert.equal(body.error.data.code, 'INSUFFICIENT_SCOPE');
    // Only the scope this call needs (RFC 6750 §3.1): the client adds it to those it holds.
    assert.deepEqual(body.error.data.details, { scope: 'tickets.write' });

    // Through the SDK: the user consents to more, the client gets a wider token, the call runs.
    as.grantable.set(RESOURCE, 'tickets.read tickets.write');
    const args = { name: 'add_label', arguments: { ticket_id: 'T-1', label: 'bug' } };
    await assert.rejects(client.callTool(args), UnauthorizedError);
    // The SDK's refused call is audited in its MCP session's gate session, as this AS's bob.
    await tg.gate.flush();
    const audited = await tg.admin.auditRecords.search(
      { rule: 'oauth.insufficient_scope', user: oauthUserId(as.issuer, 'bob') },
      { limit: 10 },
    );
    assert.ok(
      audited.items.some((r) => r.kind === 'call.denied' && r.session_id !== null),
      'the step-up refusal is in the audit log',
    );
    const asked = oauth.authorizations.at(-1);
    assert.match(asked?.searchParams.get('scope') ?? '', /\btickets\.write\b/);
    assert.ok(oauth.code);
    const transport = new StreamableHTTPClientTransport(new URL(RESOURCE), {
      authProvider: oauth,
      fetch: viaProxy,
    });
    await transport.finishAuth(oauth.code);
    const wider = new Client({ name: 'oauth-host', version: '1.0.0' });
    await wider.connect(transport);
    clients.push(wider);
    assert.notEqual(oauth.tokens()?.access_token, first);
    const result = (await wider.callTool(args)) as CallToolResult;
    assert.equal(result.isError ?? false, false, JSON.stringify(result));
  });

  test('scopes never widen the agent: a scope for a capability support-bot lacks gives nothing', async () => {
    as.grantable.set(RESOURCE, 'tickets.read iam.grant');
    const oauth = new TestOAuthClient('support-client', 'carol');
    const client = await connect(oauth);
    assert.match(oauth.tokens()?.scope ?? '', /iam\.grant/);
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(!names.includes('grant_role'));
    // Not a step-up either: no scope helps, and nothing says the tool exists.
    const result = (await client.callTool({
      name: 'grant_role',
      arguments: {},
    })) as CallToolResult;
    assert.equal(result.isError, true);
    assert.match(JSON.stringify(result), /TOOL_NOT_REGISTERED/);
  });
});

describe('the OAuth dance with the v2 SDK client, 2026-07-28', () => {
  test('discovers from the 401, authorizes with PKCE and a resource indicator, lists and calls through the gate', async () => {
    as.grantable.set(RESOURCE, 'tickets.read');
    const oauth = new TestOAuthClient('support-client', 'vera');
    const seen: string[] = [];
    const watching: typeof fetch = (input, init) => {
      seen.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
      return viaProxy(input, init);
    };
    const client = await connectWithOAuthV2(oauth, RESOURCE, watching);
    clients.push(client);
    // Discovery walked from toolgate's challenge to its metadata, then to the AS.
    assert.ok(seen.includes('/.well-known/oauth-protected-resource/mcp'), seen.join(' '));
    const [authorization] = oauth.authorizations;
    assert.ok(authorization);
    assert.equal(authorization.origin, as.issuer);
    assert.equal(authorization.searchParams.get('resource'), RESOURCE);
    assert.equal(authorization.searchParams.get('code_challenge_method'), 'S256');
    assert.ok(authorization.searchParams.get('code_challenge'));
    const token = oauth.tokens()?.access_token ?? '';
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString());
    assert.equal(claims.aud, RESOURCE);

    const list = await client.listTools();
    assert.deepEqual(
      list.tools.map((t) => t.name),
      ['get_order', 'search_tickets'],
    );
    const run = (list._meta as Record<string, unknown> | undefined)?.['io.toolgate/run'];
    assert.equal(typeof run, 'string', 'a 2026-07-28 client gets a run');
    const result = await client.callTool({
      name: 'get_order',
      arguments: { order_id: 'ORD-004211' },
      _meta: { 'io.toolgate/run': run },
    });
    assert.equal(result.isError ?? false, false, JSON.stringify(result));
    assert.match(JSON.stringify(result.structuredContent), /ORD-004211/);
    assert.equal((result._meta as Record<string, unknown>)['io.toolgate/run'], run);
    // The gate saw the call as the token's user: the AS's vera, by issuer and subject.
    const records = await tg.admin.auditRecords.search(
      { tool: 'get_order', user: oauthUserId(as.issuer, 'vera') },
      { limit: 10 },
    );
    assert.ok(records.items.length > 0, 'audited as the signed-in user');
  });
});

describe('step-up on the REST call route and the 2026-07-28 era', () => {
  const CHALLENGE = `Bearer resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", scope="tickets.write"`;

  test('REST: a tool beyond the token scopes is 403 INSUFFICIENT_SCOPE with the challenge; a covered tool runs', async () => {
    const token = await as.accessToken('dora', 'tickets.read');
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const opened = await fetch(`${base}/v1/sessions`, {
      method: 'POST',
      headers: auth,
      body: '{}',
    });
    assert.equal(opened.status, 201);
    const { id } = (await opened.json()) as { id: string };
    const stepUps = () =>
      tg.admin.auditRecords.search({ rule: 'oauth.insufficient_scope' }, { limit: 500 });
    const before = (await stepUps()).items.length;
    const refused = await fetch(`${base}/v1/sessions/${id}/calls`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ tool: 'add_label', arguments: { ticket_id: 'T-1', label: 'bug' } }),
    });
    assert.equal(refused.status, 403);
    assert.equal(refused.headers.get('www-authenticate'), CHALLENGE);
    const body = (await refused.json()) as { code: string; details: unknown };
    assert.equal(body.code, 'INSUFFICIENT_SCOPE');
    assert.deepEqual(body.details, { scope: 'tickets.write' });
    // The refusal is audited in the caller's session, as the token's user, naming the tool.
    await tg.gate.flush();
    const after = (await stepUps()).items;
    assert.equal(after.length, before + 1, 'the step-up refusal is in the audit log');
    const record = after[0];
    assert.equal(record?.kind, 'call.denied');
    assert.equal(record?.code, 'INSUFFICIENT_SCOPE');
    assert.equal(record?.session_id, id);
    assert.equal(record?.user_id, oauthUserId(as.issuer, 'dora'));
    // The gate resolved the name (the session's own reading of it) before the scope step: the
    // record names the tool itself, so no hash of the name as sent is kept beside it.
    assert.equal(record?.tool_id, 'add_label');
    assert.deepEqual(record?.details, {});
    const ran = await tg.admin.auditRecords.search(
      { tool: 'add_label', kind: 'call.pre' },
      { limit: 500 },
    );
    assert.ok(
      ran.items.every((r) => r.session_id !== id),
      'nothing ran',
    );
    // The benign neighbour: a tool the token's scope covers runs through the gate.
    const ok = await fetch(`${base}/v1/sessions/${id}/calls`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ tool: 'get_order', arguments: { order_id: 'ORD-004211' } }),
    });
    assert.equal(ok.status, 200, await ok.clone().text());
    assert.equal(ok.headers.get('www-authenticate'), null);
  });

  test('2026-07-28: tools/call beyond the token scopes is the same step-up challenge', async () => {
    const token = await as.accessToken('erin', 'tickets.read');
    const post = (name: string, args: Record<string, unknown>) =>
      fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${token}`,
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': name,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            name,
            arguments: args,
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientCapabilities': {},
              'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
            },
          },
        }),
      });
    const stepUps = async () =>
      (
        await tg.admin.auditRecords.search({ rule: 'oauth.insufficient_scope' }, { limit: 500 })
      ).items.filter((r) => r.user_id === oauthUserId(as.issuer, 'erin'));
    const before = (await stepUps()).length;
    const refused = await post('add_label', { ticket_id: 'T-1', label: 'bug' });
    assert.equal(refused.status, 403);
    assert.equal(refused.headers.get('www-authenticate'), CHALLENGE);
    const body = (await refused.json()) as { error: { data: { code: string } } };
    assert.equal(body.error.data.code, 'INSUFFICIENT_SCOPE');
    // No run named: decided and audited in the default run the request is served in, by the
    // gate's steps up to `scope` (the name read as that run lists it), naming the tool.
    await tg.gate.flush();
    const after = await stepUps();
    assert.equal(after.length, before + 1, 'the step-up refusal is in the audit log');
    assert.equal(after[0]?.kind, 'call.denied');
    assert.equal(after[0]?.tool_id, 'add_label');
    assert.equal(after[0]?.code, 'INSUFFICIENT_SCOPE');
    const ok = await post('get_order', { order_id: 'ORD-004211' });
    assert.equal(ok.status, 200, await ok.clone().text());
  });
});

describe('tokens the resource server refuses', () => {
  /** An access token for `resource` from the real AS, by the SDK's own dance. */
  async function tokenFor(clientId: string, resource: string): Promise<string> {
    const oauth = new TestOAuthClient(clientId, 'mallory');
    // The SDK asks for the resource its metadata names; another resource is asked for directly.
    const { auth } = await import('@modelcontextprotocol/sdk/client/auth.js');
    const fetchFn: typeof fetch = (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.pathname.startsWith('/.well-known/oauth-protected-resource')) {
        return Promise.resolve(
          Response.json({
            resource,
            authorization_servers: [as.issuer],
            scopes_supported: ['tickets.read'],
          }),
        );
      }
      return viaProxy(input, init);
    };
    const start = await auth(oauth, { serverUrl: resource, fetchFn });
    assert.equal(start, 'REDIRECT');
    assert.ok(oauth.code);
    assert.equal(
      await auth(oauth, { serverUrl: resource, authorizationCode: oauth.code, fetchFn }),
      'AUTHORIZED',
    );
    return oauth.tokens()?.access_token ?? '';
  }

  async function statusOf(token: string): Promise<{ status: number; challenge: string | null }> {
    const res = await mcpPost(token);
    await res.body?.cancel();
    return { status: res.status, challenge: res.headers.get('www-authenticate') };
  }

  test('benign neighbour: a token of the mapped client for this resource is accepted', async () => {
    as.grantable.set(RESOURCE, 'tickets.read');
    const token = await tokenFor('support-client', RESOURCE);
    assert.equal((await statusOf(token)).status, 200);
  });

  test('a token the same AS minted for another resource (audience) is refused', async () => {
    const token = await tokenFor('support-client', OTHER_RESOURCE);
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString());
    assert.equal(claims.aud, OTHER_RESOURCE);
    const { status, challenge } = await statusOf(token);
    assert.equal(status, 401);
    assert.match(challenge ?? '', /error="invalid_token"/);
  });

  test('a token of a client no agent is mapped to is refused', async () => {
    as.grantable.set(RESOURCE, 'tickets.read');
    const token = await tokenFor('stranger-client', RESOURCE);
    assert.equal((await statusOf(token)).status, 401);
  });

  test('a tampered token (scope widened, signature kept) is refused', async () => {
    as.grantable.set(RESOURCE, 'tickets.read');
    const token = await tokenFor('support-client', RESOURCE);
    const [h, p, s] = token.split('.');
    const claims = JSON.parse(Buffer.from(p ?? '', 'base64url').toString());
    claims.scope = 'tickets.read tickets.write';
    const forged = `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`;
    assert.equal((await statusOf(forged)).status, 401);
  });

  describe('hand-made tokens', () => {
    let claims: Record<string, unknown>;
    before(async () => {
      as.grantable.set(RESOURCE, 'tickets.read');
      const real = await tokenFor('support-client', RESOURCE);
      claims = JSON.parse(Buffer.from(real.split('.')[1] ?? '', 'base64url').toString());
    });
    const sign = async (
      payload: Record<string, unknown>,
      alg: 'ES256' | 'HS256' = 'ES256',
      key?: Uint8Array,
    ) => {
      const pair = await generateKeyPair('ES256');
      return new SignJWT(payload)
        .setProtectedHeader({ alg, kid: 'as-1', typ: 'at+jwt' })
        .sign(key ?? pair.privateKey);
    };

    test('benign neighbour: the same claims signed by the AS key are accepted', async () => {
      assert.equal((await statusOf(await as.mint(claims))).status, 200);
    });

    test('a token signed by another key under the AS issuer is refused', async () => {
      assert.equal((await statusOf(await sign(claims))).status, 401);
    });

    test('a token of another issuer is refused, even signed by a trusted key', async () => {
      assert.equal(
        (await statusOf(await as.mint({ ...claims, iss: 'https://evil-as.test' }))).status,
        401,
      );
    });

    test('an expired token is refused', async () => {
      const now = Math.floor(Date.now() / 1000);
      const expired = await as.mint({ ...claims, iat: now - 7200, exp: now - 3600 });
      assert.equal((await statusOf(expired)).status, 401);
    });

    test('a token not yet valid (nbf) is refused', async () => {
      const now = Math.floor(Date.now() / 1000);
      assert.equal((await statusOf(await as.mint({ ...claims, nbf: now + 3600 }))).status, 401);
    });

    test('a token for another audience, or several without this one, is refused', async () => {
      for (const aud of ['https://toolgate.test/mcp/', 'https://toolgate.test', [OTHER_RESOURCE]]) {
        assert.equal((await statusOf(await as.mint({ ...claims, aud }))).status, 401, String(aud));
      }
    });

    test('a token that names this resource and another audience too is refused; this one alone passes', async () => {
      // Attack round 8 F10: a token good for toolgate and another API at once could be replayed
      // between them; the audience must be exactly this resource (a one-element list is too).
      const both = await as.mint({ ...claims, aud: [RESOURCE, OTHER_RESOURCE] });
      assert.equal((await statusOf(both)).status, 401);
      assert.equal((await statusOf(await as.mint({ ...claims, aud: [RESOURCE] }))).status, 200);
    });

    test('a token without a client claim, or of an unmapped client, is refused', async () => {
      const { client_id: _client, ...anonymous } = claims;
      assert.equal((await statusOf(await as.mint(anonymous))).status, 401);
      assert.equal(
        (await statusOf(await as.mint({ ...claims, client_id: 'stranger-client' }))).status,
        401,
      );
      // azp is the fallback claim: the mapped client there is accepted.
      assert.equal(
        (await statusOf(await as.mint({ ...anonymous, azp: 'support-client' }))).status,
        200,
      );
    });

    test('HS256 signed with the AS public key as the secret is refused', async () => {
      const jwks = (await (await fetch(as.jwksUrl)).json()) as { keys: Record<string, unknown>[] };
      const secret = new TextEncoder().encode(JSON.stringify(jwks.keys[0]));
      assert.equal((await statusOf(await sign(claims, 'HS256', secret))).status, 401);
      const pem = new TextEncoder().encode(
        JSON.stringify(await exportJWK((await generateKeyPair('ES256')).publicKey)),
      );
      assert.equal((await statusOf(await sign(claims, 'HS256', pem))).status, 401);
    });
  });
});
