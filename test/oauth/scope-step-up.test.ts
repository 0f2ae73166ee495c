/**
 * A token's scopes narrow each request, never the run or session it opened (attack round 8 F4).
 * Two access tokens of one user and client (the same principal): `tickets.read`, and
 * `tickets.read tickets.write`. A run or session opened with the narrower one still runs the
 * wider one's covered call after a step-up (benign), in both MCP eras and over REST; one opened
 * with the wider token neither lists nor calls, for the narrower token, what its scopes do not
 * cover (attack); and no token, whatever its scopes, gets a tool its agent is not granted.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Actor } from '../../src/core/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { approvePendingReviews } from '../support/reviews.js';
import { type AuthorizationServer, startAuthorizationServer } from './authorization-server.js';
import { modernRpc, type Rpc, rpcSession } from './mcp-rpc.js';
import { openSupportGateway } from './support-gateway.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const PUBLIC = 'https://toolgate.test';
const RESOURCE = `${PUBLIC}/mcp`;
const CHALLENGE = `Bearer resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", scope="tickets.write"`;
const READ = 'tickets.read';
const WRITE = 'tickets.read tickets.write';
/** Every scope configured: iam.grant maps to a capability support-bot is not granted. */
const ALL = 'tickets.read tickets.write iam.grant';
const LABEL = { name: 'add_label', arguments: { ticket_id: 'T-1', label: 'bug' } };
const GRANT = { name: 'grant_role', arguments: {} };
/**
 * A second tool named `add_label` (another id): sessions list it under its catalog id,
 * `ops__add_label`, and a step-up must read that name as the session lists it.
 */
const OPS_LABEL_TOOL = `apiVersion: toolgate/v1
kind: Tool
spec:
  id: ops.add_label
  version: 1.0.0
  name: add_label
  description: Add a label to an operations ticket; labels can be removed again.
  tags: [tickets, support, write]
  owner: support-team
  action_class: reversible_write
  data_access: none
  egress: { mode: none }
  access_tier: public
  required_capabilities: ["tickets:write"]
  runtime: { kind: inline, handler: demo.add_label }
  provenance: internal
  input_schema:
    type: object
    additionalProperties: false
    required: [ticket_id, label]
    properties:
      ticket_id: { type: string, maxLength: 40 }
      label: { type: string, enum: [billing, bug, urgent, feature-request, resolved] }
  output_schema:
    type: object
    required: [labels]
    properties:
      labels: { type: array, items: { type: string } }
`;
const OPS_LABEL = { name: 'ops__add_label', arguments: { ticket_id: 'T-2', label: 'bug' } };

let dir: string;
let as: AuthorizationServer;
let tg: Gateway;
let app: FastifyInstance;
let base = '';

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-step-up-'));
  as = await startAuthorizationServer({
    publicClients: ['support-client'],
    exchangeClients: {},
    resources: { [RESOURCE]: READ },
  });
  tg = await openSupportGateway(dir, as, RESOURCE, admin);
  await tg.config.applyText(OPS_LABEL_TOOL, admin);
  await approvePendingReviews(tg.admin);
  app = await buildServer(tg, { adminToken: 'step-up-test-admin-token-0123456789abcdef' });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});

after(async () => {
  await app?.close();
  await tg?.close();
  await as?.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

const names = (r: Rpc) => (r.body.result?.tools ?? []).map((t) => t.name).sort();

/** A 2025-06-18 MCP session opened by `token`: its requests, as whichever token sends them. */
const legacySession = (token: string) => rpcSession(base, token);

/** A raw 2026-07-28 request as `token`, in the run `run` when one is named. */
const modern = (token: string, method: string, params: Record<string, unknown>, run?: string) =>
  modernRpc(base, token, method, params, run);

/** A REST agent request as `token`. */
async function rest(token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return {
    status: res.status,
    challenge: res.headers.get('www-authenticate'),
    body: (await res.json()) as Record<string, unknown>,
  };
}

const restNames = (body: Record<string, unknown>) =>
  ((body.tools ?? []) as { name: string }[]).map((t) => t.name).sort();

describe('2026-07-28: the run a narrower token opened', () => {
  test('benign: after a step-up the wider token runs the call in the same default run and lists it', async () => {
    const read = await as.accessToken('u-modern-up', READ);
    const write = await as.accessToken('u-modern-up', WRITE);
    const listed = await modern(read, 'tools/list', {});
    assert.equal(listed.status, 200);
    const run = listed.body.result?._meta?.['io.toolgate/run'];
    assert.equal(typeof run, 'string');
    assert.ok(!names(listed).includes('add_label'), names(listed).join());
    const refused = await modern(read, 'tools/call', LABEL);
    assert.equal(refused.status, 403);
    assert.equal(refused.challenge, CHALLENGE);
    // The client steps up and retries: the same principal's default run, then the run named.
    const retried = await modern(write, 'tools/call', LABEL);
    assert.equal(retried.status, 200);
    assert.equal(retried.body.result?.isError ?? false, false, JSON.stringify(retried.body));
    assert.equal(retried.body.result?._meta?.['io.toolgate/run'], run);
    const named = await modern(write, 'tools/call', LABEL, run as string);
    assert.equal(named.body.result?.isError ?? false, false, JSON.stringify(named.body));
    const wider = await modern(write, 'tools/list', {}, run as string);
    assert.ok(names(wider).includes('add_label'), names(wider).join());
  });

  test('attack: a run the wider token opened neither lists nor runs, for the narrower token, what it does not cover', async () => {
    const write = await as.accessToken('u-modern-down', WRITE);
    const read = await as.accessToken('u-modern-down', READ);
    const listed = await modern(write, 'tools/list', {});
    const run = listed.body.result?._meta?.['io.toolgate/run'] as string;
    assert.ok(names(listed).includes('add_label'), names(listed).join());
    const narrowed = await modern(read, 'tools/list', {}, run);
    assert.equal(narrowed.body.result?._meta?.['io.toolgate/run'], run);
    assert.deepEqual(names(narrowed), ['get_order', 'search_tickets']);
    for (const named of [undefined, run]) {
      const refused = await modern(read, 'tools/call', LABEL, named);
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.equal(refused.challenge, CHALLENGE);
    }
    // The benign neighbour: what the narrower token covers runs in the same run.
    const ok = await modern(read, 'tools/call', {
      name: 'get_order',
      arguments: { order_id: 'ORD-004211' },
    });
    assert.equal(ok.body.result?.isError ?? false, false, JSON.stringify(ok.body));
  });
});

describe('2025-06-18: the MCP session a narrower token opened', () => {
  test('benign: after a step-up the wider token runs the call in the same session and lists it', async () => {
    const read = await as.accessToken('u-legacy-up', READ);
    const write = await as.accessToken('u-legacy-up', WRITE);
    const session = await legacySession(read);
    assert.deepEqual(names(await session.list(read)), ['get_order', 'search_tickets']);
    const refused = await session.call(read, LABEL);
    assert.equal(refused.status, 403);
    assert.equal(refused.challenge, CHALLENGE);
    const retried = await session.call(write, LABEL);
    assert.equal(retried.status, 200);
    assert.equal(retried.body.result?.isError ?? false, false, JSON.stringify(retried.body));
    assert.ok(names(await session.list(write)).includes('add_label'));
  });

  test('attack: a session the wider token opened neither lists nor runs, for the narrower token, what it does not cover', async () => {
    const write = await as.accessToken('u-legacy-down', WRITE);
    const read = await as.accessToken('u-legacy-down', READ);
    const session = await legacySession(write);
    assert.ok(names(await session.list(write)).includes('add_label'));
    assert.deepEqual(names(await session.list(read)), ['get_order', 'search_tickets']);
    const refused = await session.call(read, LABEL);
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal(refused.challenge, CHALLENGE);
    assert.equal(refused.body.error?.data?.code, 'INSUFFICIENT_SCOPE');
    const ok = await session.call(read, {
      name: 'get_order',
      arguments: { order_id: 'ORD-004211' },
    });
    assert.equal(ok.body.result?.isError ?? false, false, JSON.stringify(ok.body));
  });
});

describe('REST: the session a narrower token opened', () => {
  test('benign: after a step-up the wider token runs the call in the same session and lists it', async () => {
    const read = await as.accessToken('u-rest-up', READ);
    const write = await as.accessToken('u-rest-up', WRITE);
    const opened = await rest(read, 'POST', '/v1/sessions', {});
    assert.equal(opened.status, 201);
    const id = opened.body.id as string;
    assert.deepEqual(restNames(opened.body), ['get_order', 'search_tickets']);
    const call = { tool: LABEL.name, arguments: LABEL.arguments };
    const refused = await rest(read, 'POST', `/v1/sessions/${id}/calls`, call);
    assert.equal(refused.status, 403);
    assert.equal(refused.challenge, CHALLENGE);
    const retried = await rest(write, 'POST', `/v1/sessions/${id}/calls`, call);
    assert.equal(retried.status, 200, JSON.stringify(retried.body));
    const listed = await rest(write, 'GET', `/v1/sessions/${id}/tools`);
    assert.ok(restNames(listed.body).includes('add_label'), JSON.stringify(listed.body));
    // Searching without a session: each token finds what it covers of the agent's set.
    const found = async (token: string) =>
      (
        ((await rest(token, 'GET', '/v1/discover?q=label+ticket')).body.results ?? []) as {
          name: string;
        }[]
      ).map((r) => r.name);
    assert.ok(!(await found(read)).includes('add_label'));
    assert.ok((await found(write)).includes('add_label'));
  });

  test('attack: a session the wider token opened neither lists nor runs, for the narrower token, what it does not cover', async () => {
    const write = await as.accessToken('u-rest-down', WRITE);
    const read = await as.accessToken('u-rest-down', READ);
    const opened = await rest(write, 'POST', '/v1/sessions', {});
    const id = opened.body.id as string;
    assert.ok(restNames(opened.body).includes('add_label'));
    // The wider token ran the tool under a key: its owner reads the outcome, the narrower token
    // reads nothing of a tool it does not cover.
    const keyed = { tool: LABEL.name, arguments: LABEL.arguments, idempotency_key: 'k-down' };
    assert.equal((await rest(write, 'POST', `/v1/sessions/${id}/calls`, keyed)).status, 200);
    const outcome = `/v1/sessions/${id}/idempotency/k-down?tool=add_label`;
    assert.equal((await rest(write, 'GET', outcome)).status, 200);
    const unread = await rest(read, 'GET', outcome);
    assert.equal(unread.status, 404);
    assert.equal(unread.body.code, 'IDEMPOTENCY_KEY_NOT_FOUND');
    const listed = await rest(read, 'GET', `/v1/sessions/${id}/tools`);
    assert.equal(listed.status, 200);
    assert.deepEqual(restNames(listed.body), ['get_order', 'search_tickets']);
    // Searching the session finds only what the token covers; the wider token finds the tool.
    const found = async (token: string) =>
      (
        ((await rest(token, 'GET', `/v1/sessions/${id}/discover?q=label+ticket`)).body.results ??
          []) as { name: string }[]
      ).map((r) => r.name);
    assert.ok(!(await found(read)).includes('add_label'));
    assert.ok((await found(write)).includes('add_label'));
    const call = { tool: LABEL.name, arguments: LABEL.arguments };
    const refused = await rest(read, 'POST', `/v1/sessions/${id}/calls`, call);
    assert.equal(refused.status, 403);
    assert.equal(refused.challenge, CHALLENGE);
    assert.equal(refused.body.code, 'INSUFFICIENT_SCOPE');
    const ok = await rest(read, 'POST', `/v1/sessions/${id}/calls`, {
      tool: 'get_order',
      arguments: { order_id: 'ORD-004211' },
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });
});

describe('scopes never widen past the agent grants', () => {
  test('attack: a token holding every scope gets no tool support-bot is not granted, in any era', async () => {
    const read = await as.accessToken('u-widen', READ);
    const all = await as.accessToken('u-widen', ALL);
    // Opened by the narrower token, then used by the widest one: the run, the MCP session, REST.
    const listed = await modern(read, 'tools/list', {});
    const run = listed.body.result?._meta?.['io.toolgate/run'] as string;
    const modernList = await modern(all, 'tools/list', {}, run);
    assert.ok(!names(modernList).includes('grant_role'));
    const modernCall = await modern(all, 'tools/call', GRANT, run);
    assert.equal(modernCall.status, 200, 'not a step-up: no scope helps');
    assert.match(JSON.stringify(modernCall.body), /TOOL_NOT_REGISTERED/);

    const session = await legacySession(read);
    assert.ok(!names(await session.list(all)).includes('grant_role'));
    const legacyCall = await session.call(all, GRANT);
    assert.equal(legacyCall.status, 200);
    assert.match(JSON.stringify(legacyCall.body), /TOOL_NOT_REGISTERED/);

    const opened = await rest(read, 'POST', '/v1/sessions', {});
    const id = opened.body.id as string;
    const listedRest = await rest(all, 'GET', `/v1/sessions/${id}/tools`);
    assert.ok(!restNames(listedRest.body).includes('grant_role'));
    const restCall = await rest(all, 'POST', `/v1/sessions/${id}/calls`, {
      tool: GRANT.name,
      arguments: {},
    });
    assert.equal(restCall.body.code, 'TOOL_NOT_REGISTERED');
    assert.equal(restCall.challenge, null);
    // Granted, but no configured scope maps its capability (docs:read): no token reaches it.
    assert.ok(!restNames(listedRest.body).includes('http_get'));
    const unreachable = await rest(all, 'POST', `/v1/sessions/${id}/calls`, {
      tool: 'http_get',
      arguments: { url: 'https://docs.example.com/a' },
    });
    assert.equal(unreachable.body.code, 'TOOL_NOT_REGISTERED');
    // The benign neighbour: the widest token runs what support-bot is granted.
    const ran = await rest(all, 'POST', `/v1/sessions/${id}/calls`, {
      tool: LABEL.name,
      arguments: LABEL.arguments,
    });
    assert.equal(ran.status, 200, JSON.stringify(ran.body));
  });
});

describe('a tool listed under its clash name (attack round 9 F1)', () => {
  test('attack: the narrower token calling it by that name is asked to step up, in both eras and over REST', async () => {
    const write = await as.accessToken('u-clash', WRITE);
    const read = await as.accessToken('u-clash', READ);
    // 2026-07-28: the wider token's run lists it under the clash name.
    const listed = await modern(write, 'tools/list', {});
    const run = listed.body.result?._meta?.['io.toolgate/run'] as string;
    assert.ok(names(listed).includes('ops__add_label'), names(listed).join());
    for (const named of [run, undefined]) {
      const refused = await modern(read, 'tools/call', OPS_LABEL, named);
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.equal(refused.challenge, CHALLENGE);
    }
    // 2025: the session the wider token opened.
    const legacy = await legacySession(write);
    const refused = await legacy.call(read, OPS_LABEL);
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal(refused.challenge, CHALLENGE);
    // REST: a session the wider token opened.
    const opened = await rest(write, 'POST', '/v1/sessions', {});
    const id = String(opened.body.session_id ?? opened.body.id);
    const call = await rest(read, 'POST', `/v1/sessions/${id}/calls`, {
      tool: OPS_LABEL.name,
      arguments: OPS_LABEL.arguments,
    });
    assert.equal(call.status, 403, JSON.stringify(call.body));
    assert.equal(call.challenge, CHALLENGE);
  });

  test('benign: the wider token runs it by that name', async () => {
    const write = await as.accessToken('u-clash-ok', WRITE);
    const ran = await modern(write, 'tools/call', OPS_LABEL);
    assert.equal(ran.status, 200);
    assert.equal(ran.body.result?.isError ?? false, false, JSON.stringify(ran.body));
  });
});
