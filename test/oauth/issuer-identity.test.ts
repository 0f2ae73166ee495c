/**
 * A user is (issuer, subject). Two real authorization servers (oidc-provider on 127.0.0.1) both
 * trusted by toolgate each sign an access token for a user `alice` of the same OAuth client: they
 * are two users. The second never receives the first's replayed idempotent result, nor a session
 * of hers, and the records name each by issuer and subject; an API-key agent acting for the
 * local user `alice` is a third. An admin disables one issuer's alice, never the other's.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Actor } from '../../src/core/index.js';
import {
  oauthUserId,
  parseOAuthConfig,
  parseOAuthUserId,
} from '../../src/domain/identity/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { ROOT } from '../support/cli.js';
import { approvePendingReviews } from '../support/reviews.js';
import { LOOPBACK_OUTBOUND } from '../support/webhook-receiver.js';
import { initializeRequest, postMcp } from '../support/world.js';
import { type AuthorizationServer, startAuthorizationServer } from './authorization-server.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const DEMO = readFileSync(join(ROOT, 'demo', 'catalog.yaml'), 'utf8');
const RESOURCE = 'https://toolgate.test/mcp';

let dir: string;
let asA: AuthorizationServer;
let asB: AuthorizationServer;
let tg: Gateway;
let app: FastifyInstance;
let base = '';
let apiKey = '';

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-issuers-'));
  const options = {
    publicClients: ['support-client'],
    exchangeClients: {},
    resources: { [RESOURCE]: 'tickets.read' },
  };
  asA = await startAuthorizationServer(options);
  asB = await startAuthorizationServer(options);
  tg = await openGateway({
    // The test authorization server listens on loopback: the admin's setting allows it.
    outbound: LOOPBACK_OUTBOUND,
    db: `sqlite:${join(dir, 'tg.db')}`,
    oauth: parseOAuthConfig({
      resource: RESOURCE,
      issuers: [
        { issuer: asA.issuer, jwksUrl: asA.jwksUrl },
        { issuer: asB.issuer, jwksUrl: asB.jwksUrl },
      ],
      clients: { 'support-client': 'support-bot' },
      scopes: { 'tickets.read': ['tickets:read', 'orders:read'] },
    }),
  });
  await tg.config.applyText(DEMO, admin);
  await tg.config.apply(
    [{ kind: 'User', spec: { id: 'alice', permissions: ['orders:read', 'tickets:read'] } }],
    admin,
  );
  await approvePendingReviews(tg.admin);
  apiKey = (await tg.keys.issue('support-bot', admin)).apiKey;
  app = await buildServer(tg, { adminToken: 'issuer-test-admin-token-0123456789abcdef' });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});

after(async () => {
  await app?.close();
  await tg?.close();
  await asA?.close();
  await asB?.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

async function openSession(bearer: string, body: Record<string, unknown> = {}) {
  const res = await fetch(`${base}/v1/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { id: string; user_id: string | null } };
}

async function call(bearer: string, session: string, key: string) {
  const res = await fetch(`${base}/v1/sessions/${session}/calls`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      tool: 'get_order',
      arguments: { order_id: 'ORD-004211' },
      idempotency_key: key,
    }),
  });
  const body = (await res.json()) as { call_id?: string; code?: string; details?: unknown };
  return { status: res.status, body };
}

/** The `auth.refused` events of support-bot, oldest first. */
async function refusals(): Promise<Record<string, unknown>[]> {
  return (await tg.admin.events.list({ subject: 'agent:support-bot', limit: 10_000 }))
    .filter((e) => e.action === 'auth.refused')
    .map((e) => JSON.parse(e.details) as Record<string, unknown>);
}

describe('a user is an issuer and a subject', () => {
  test("issuer B's alice never receives issuer A's alice's replayed result; A's alice does", async () => {
    const a = await asA.accessToken('alice', 'tickets.read');
    const b = await asB.accessToken('alice', 'tickets.read');
    const sessionA = await openSession(a);
    assert.equal(sessionA.status, 201);
    assert.equal(sessionA.body.user_id, oauthUserId(asA.issuer, 'alice'));
    const first = await call(a, sessionA.body.id, 'shared-key-1');
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const firstCall = first.body.call_id;
    assert.ok(firstCall);

    // Benign neighbour: the same person of the same issuer, in another session, is replayed.
    const againA = await openSession(a);
    const replay = await call(a, againA.body.id, 'shared-key-1');
    assert.equal(replay.status, 200);
    assert.equal(replay.body.call_id, firstCall);

    // Another issuer's alice is another user: her call runs as her own.
    const sessionB = await openSession(b);
    assert.equal(sessionB.status, 201);
    assert.equal(sessionB.body.user_id, oauthUserId(asB.issuer, 'alice'));
    const other = await call(b, sessionB.body.id, 'shared-key-1');
    assert.equal(other.status, 200, JSON.stringify(other.body));
    assert.notEqual(other.body.call_id, firstCall);

    // The local user alice an API-key agent acts for is a third user.
    const local = await openSession(apiKey, { on_behalf_of: 'alice' });
    assert.equal(local.status, 201);
    assert.equal(local.body.user_id, 'alice');
    const third = await call(apiKey, local.body.id, 'shared-key-1');
    assert.equal(third.status, 200, JSON.stringify(third.body));
    assert.notEqual(third.body.call_id, firstCall);
    assert.notEqual(third.body.call_id, other.body.call_id);

    // The audit records name each user by issuer and subject.
    const records = await tg.admin.auditRecords.search(
      { user: oauthUserId(asB.issuer, 'alice') },
      { limit: 50 },
    );
    assert.ok(records.items.length > 0);
    assert.ok(records.items.every((r) => r.user_id === oauthUserId(asB.issuer, 'alice')));
    assert.ok(records.items.every((r) => r.call_id !== firstCall));
  });

  test("issuer B's alice presenting A's alice's session is refused as if it did not exist", async () => {
    const a = await asA.accessToken('alice', 'tickets.read');
    const b = await asB.accessToken('alice', 'tickets.read');
    const sessionA = await openSession(a);
    const stolen = await call(b, sessionA.body.id, 'stolen-key');
    assert.equal(stolen.status, 404);
    assert.equal(stolen.body.code, 'SESSION_NOT_FOUND');
    assert.equal((await call(a, sessionA.body.id, 'own-key')).status, 200);
  });

  test('no agent can act for an OAuth user by writing its id in on_behalf_of', async () => {
    const forged = await openSession(apiKey, { on_behalf_of: oauthUserId(asA.issuer, 'alice') });
    assert.equal(forged.status, 400);
    assert.equal((forged.body as unknown as { code: string }).code, 'INPUT_INVALID');
    await assert.rejects(
      tg.agent.sessions.open('support-bot', { onBehalfOf: oauthUserId(asA.issuer, 'alice') }),
      (err: { code?: string }) => err.code === 'INPUT_INVALID',
    );
  });

  test("an admin disables issuer A's alice; issuer B's alice and the local alice still work", async () => {
    const id = oauthUserId(asA.issuer, 'alice');
    await tg.config.apply([{ kind: 'User', spec: { id, permissions: [], enabled: false } }], admin);
    try {
      const before = (await refusals()).length;
      const refused = await openSession(await asA.accessToken('alice', 'tickets.read'));
      assert.equal(refused.status, 401);
      // The refused token named its caller: audited, with the whole user.
      const audited = (await refusals()).slice(before);
      assert.deepEqual(
        audited.map((d) => [d.reason, d.user]),
        [['user_disabled', id]],
      );
      assert.equal((await openSession(await asB.accessToken('alice', 'tickets.read'))).status, 201);
      assert.equal((await openSession(apiKey, { on_behalf_of: 'alice' })).status, 201);
    } finally {
      await tg.config.apply(
        [{ kind: 'User', spec: { id, permissions: [], enabled: true } }],
        admin,
      );
    }
  });

  test('one spelling per user: the encoding parses back exactly, anything else is no OAuth user', () => {
    const id = oauthUserId('https://a.example', 'al"ice');
    assert.deepEqual(parseOAuthUserId(id), { issuer: 'https://a.example', subject: 'al"ice' });
    assert.notEqual(oauthUserId('https://a.example', 'b'), oauthUserId('https://a.exampleb', ''));
    for (const other of [
      'alice',
      'oauth:["https://a.example", "alice"]',
      'oauth:["https://a.example","alice","x"]',
      'oauth:["","alice"]',
      'oauth:{"0":"a","1":"b"}',
    ])
      assert.equal(parseOAuthUserId(other), null, other);
  });
});

describe('a subject that would read as someone else is no user (attack round 15, R1)', () => {
  test('an access token whose subject holds a bidi override, a zero-width or a control character is refused; a name in any script is not', async () => {
    for (const subject of ['\u202erotciv\u202c', 'bo\u200bb', 'eve\u0007', 'mal\u2066lory']) {
      const token = await asA.accessToken(subject, 'tickets.read');
      const opened = await openSession(token);
      assert.equal(opened.status, 401, JSON.stringify(subject));
    }
    // Nor does an id of that shape name an OAuth user anywhere an id is read.
    assert.equal(parseOAuthUserId(oauthUserId(asA.issuer, '\u202erotciv\u202c')), null);
    // Nor one whose issuer holds one (attack round 16, S2).
    assert.equal(parseOAuthUserId(oauthUserId(`${asA.issuer}\u202e`, 'bob')), null);
    assert.deepEqual(parseOAuthUserId(oauthUserId(asA.issuer, 'bob')), {
      issuer: asA.issuer,
      subject: 'bob',
    });
    // Benign neighbours: subjects in other scripts, with accents and punctuation.
    for (const subject of ['Ålice Ünal', '李雷', "o'brien-smith@example.test"]) {
      const token = await asA.accessToken(subject, 'tickets.read');
      const opened = await openSession(token);
      assert.equal(opened.status, 201, JSON.stringify(opened.body));
      assert.equal(opened.body.user_id, oauthUserId(asA.issuer, subject));
    }
  });
});

describe('refusals at the edge that name a caller are audited', () => {
  test('a known agent’s key with a wrong secret is refused and audited on REST and MCP; the right key and a key naming nothing are not', async () => {
    const keyId = apiKey.slice('tgk_'.length, 'tgk_'.length + 16);
    const wrong = `tgk_${keyId}_${'A'.repeat(43)}`;
    const nobody = `tgk_${'B'.repeat(16)}_${'A'.repeat(43)}`;
    const before = (await refusals()).length;
    assert.equal((await openSession(wrong)).status, 401);
    const mcp = await postMcp(base, initializeRequest(), wrong);
    assert.equal(mcp.status, 401);
    // Sampled per peer and key (test/http/auth-refused-flood.test.ts): the first ones in full.
    const peer = tg.audit.writer.pseudonyms.token('127.0.0.1');
    assert.deepEqual((await refusals()).slice(before), [
      { credential: `key:${keyId}`, reason: 'api_key_refused', remote: peer, sampled: true },
      { credential: `key:${keyId}`, reason: 'api_key_refused', remote: peer, sampled: true },
    ]);
    // Benign neighbours: a key naming no stored key identifies nobody; the right key works.
    assert.equal((await openSession(nobody)).status, 401);
    assert.equal((await openSession(apiKey, { on_behalf_of: 'alice' })).status, 201);
    assert.equal((await refusals()).length, before + 2);
  });
});
