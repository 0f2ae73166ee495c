/**
 * Sessions are bound to the full principal: agent, the user a JWT names,
 * and the credential (API key id, or JWT issuer + subject). Another user or key of the same agent
 * presenting a session id gets 404 and a security event; idempotency keys are scoped to agent and
 * user, and every replay is audited; a JWT acting for a disabled user opens nothing. Through REST
 * and MCP (official SDK client), on SQLite and (when the harness runs one) PostgreSQL.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type generateKeyPair, SignJWT } from 'jose';
import type { Actor } from '../../src/core/index.js';
import { InlineExecutor } from '../../src/execution/runtimes/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { validTool } from '../support/tools.js';
import {
  actForJwt,
  openWorld,
  restClient,
  signingKeyWithJwks,
  type World,
} from '../support/world.js';

const admin: Actor = { id: 'admin', via: 'library' };
const ISSUER = 'https://idp.example.com';
const AUDIENCE = 'toolgate';
const ADMIN_TOKEN = 'principal-test-admin-token-0123456789abcdef';
type Key = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

let dir: string;
let privateKey: Key;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-principal-'));
  privateKey = await signingKeyWithJwks(join(dir, 'jwks.json'));
});
after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

/** A token for agent acme-bot acting for `user` (or for nobody). */
async function jwtFor(user: string | null, sub = 'acme-bot'): Promise<string> {
  return new SignJWT(user === null ? {} : { act_for: user, scope: 'billing:read' })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setSubject(sub)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(privateKey);
}

for (const backend of backends()) {
  describe(`sessions bound to the full principal (${backend.name})`, () => {
    let tg: Gateway;
    let world: World;
    let base: string;
    let inspector: Store;
    let keyA: string;
    let keyB: string;
    let runs = 0;
    const clients: Client[] = [];

    before(async () => {
      // Each run answers differently, so a replayed answer is told apart from a new one.
      const executor = new InlineExecutor().register('test.lookup_invoice', () => {
        runs += 1;
        return { status: `run-${runs}` };
      });
      world = await openWorld({
        backend,
        rest: { adminToken: ADMIN_TOKEN },
        options: {
          executor,
          jwt: actForJwt(dir, ISSUER, AUDIENCE),
        },
      });
      ({ tg, base } = world);
      await tg.config.apply(
        [
          { kind: 'Agent', spec: { id: 'acme-bot', owner: 'qa' } },
          { kind: 'Tool', spec: validTool() },
          { kind: 'Grant', spec: { agent: 'acme-bot', capabilities: ['billing:read'] } },
          { kind: 'User', spec: { id: 'u1', permissions: ['billing:read'] } },
          { kind: 'User', spec: { id: 'u2', permissions: ['billing:read'] } },
          { kind: 'User', spec: { id: 'u3', permissions: ['billing:read'], enabled: false } },
          { kind: 'User', spec: { id: 'u4', permissions: ['billing:read'] } },
        ],
        admin,
      );
      keyA = (await tg.keys.issue('acme-bot', admin)).apiKey;
      keyB = (await tg.keys.issue('acme-bot', admin)).apiKey;
      inspector = await openStore(world.db);
    });
    after(async () => {
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
      await inspector.close();
      await world.close();
    });

    const client = restClient<
      Record<string, unknown> & {
        id?: string;
        code?: string;
        call_id?: string;
        output?: { status: string };
      }
    >(() => base);
    const rest = (method: string, path: string, bearer: string, body?: unknown) =>
      client(method, path, body, bearer);
    const openSession = async (bearer: string, body: unknown = {}) => {
      const r = await rest('POST', '/v1/sessions', bearer, body);
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return String(r.body.id);
    };
    const call = (bearer: string, session: string, extra: Record<string, unknown> = {}) =>
      rest('POST', `/v1/sessions/${session}/calls`, bearer, {
        tool: 'lookup_invoice',
        arguments: { invoice: 'INV-1' },
        ...extra,
      });
    const mismatches = async (session: string) =>
      (
        await inspector.db
          .selectFrom('events')
          .selectAll()
          .where('action', '=', 'session.principal_mismatch')
          .where('subject', '=', `session:${session}`)
          .execute()
      ).map((e) => JSON.parse(e.details) as Record<string, Record<string, unknown>>);

    test('REST: another user of the same agent cannot use a JWT session (404, audited); its owner can', async () => {
      const u1 = await jwtFor('u1');
      const u2 = await jwtFor('u2');
      const session = await openSession(u1);

      const stolen = await call(u2, session);
      assert.equal(stolen.status, 404);
      assert.equal(stolen.body.code, 'SESSION_NOT_FOUND');
      assert.deepEqual(stolen.body.details, { sessionId: session });
      const tools = await rest('GET', `/v1/sessions/${session}/tools`, u2);
      assert.equal(tools.status, 404);
      const closed = await rest('DELETE', `/v1/sessions/${session}`, u2);
      assert.equal(closed.status, 404);

      const events = await mismatches(session);
      assert.equal(events.length, 3, 'each attempt is a security event');
      assert.equal(events[0]?.presented?.user, 'u2');
      assert.equal(events[0]?.bound?.user, 'u1');
      assert.equal(events[0]?.bound?.agent, 'acme-bot');

      const own = await call(u1, session);
      assert.equal(own.status, 200, JSON.stringify(own.body));
      // Durable when the call answered; in the chain once integrated (PostgreSQL stages records
      // for the fleet's sequencer: docs/architecture.md §5).
      await inspector.audit.settled();
      const rows = await inspector.db
        .selectFrom('audit_log')
        .select(['user_id', 'kind'])
        .where('session_id', '=', session)
        .execute();
      assert.ok(rows.length > 0);
      assert.ok(
        rows.every((r) => r.user_id === 'u1'),
        'the audit chain records the user who opened the session',
      );
      assert.equal((await rest('DELETE', `/v1/sessions/${session}`, u1)).status, 204);
    });

    test('REST: a token naming no user cannot take over a session opened for a user, nor the reverse', async () => {
      const forU1 = await openSession(await jwtFor('u1'));
      assert.equal((await call(await jwtFor(null), forU1)).status, 404);
      const forNobody = await openSession(await jwtFor(null));
      assert.equal((await call(await jwtFor('u1'), forNobody)).status, 404);
      assert.equal((await call(await jwtFor(null), forNobody)).status, 200);
    });

    test('REST: another API key of the same agent cannot use the session (404, audited); the key that opened it can', async () => {
      const session = await openSession(keyA, { on_behalf_of: 'u1' });
      const other = await call(keyB, session);
      assert.equal(other.status, 404);
      assert.equal(other.body.code, 'SESSION_NOT_FOUND');
      const [event] = await mismatches(session);
      assert.match(String(event?.presented?.credential), /^key:/);
      assert.match(String(event?.bound?.credential), /^key:/);
      assert.notEqual(event?.presented?.credential, event?.bound?.credential);
      // A JWT of the same agent is another credential too.
      assert.equal((await call(await jwtFor(null), session)).status, 404);
      assert.equal((await call(keyA, session)).status, 200);
    });

    const connect = async (token: string, sessionId?: string) => {
      const client = new Client({ name: 'principal-test', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
        ...(sessionId ? { sessionId } : {}),
      });
      clients.push(client);
      if (sessionId) {
        // Joining an existing session: no initialize, the transport just sends the id.
        await client.connect(transport).catch(() => {});
      } else {
        await client.connect(transport);
      }
      return { client, transport };
    };

    test('MCP: a second user presenting the first user’s Mcp-Session-Id gets 404 (audited), not their tools', async () => {
      const first = await connect(await jwtFor('u1'));
      const mcpSession = first.transport.sessionId;
      assert.ok(mcpSession);
      assert.deepEqual(
        (await first.client.listTools()).tools.map((t) => t.name),
        ['lookup_invoice'],
      );
      const before = await inspector.db
        .selectFrom('events')
        .select('seq')
        .where('action', '=', 'session.principal_mismatch')
        .execute();

      // Raw HTTP, as an attacker would send it.
      const raw = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${await jwtFor('u2')}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': mcpSession,
          'mcp-protocol-version': '2025-06-18',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      assert.equal(raw.status, 404);
      const rawBody = (await raw.json()) as { error?: { message?: string } };
      assert.equal(rawBody.error?.message, 'session not found');

      // The official client, told to use the stolen id.
      const thief = await connect(await jwtFor('u2'), mcpSession);
      await assert.rejects(thief.client.listTools());
      // Another key of the agent, too.
      const keyed = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${keyB}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': mcpSession,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      });
      assert.equal(keyed.status, 404);

      const afterEvents = await inspector.db
        .selectFrom('events')
        .select('seq')
        .where('action', '=', 'session.principal_mismatch')
        .execute();
      assert.ok(afterEvents.length >= before.length + 2, 'MCP mismatches are audited');
      // The owner's session is untouched.
      const result = await first.client.callTool({
        name: 'lookup_invoice',
        arguments: { invoice: 'INV-9' },
      });
      assert.notEqual(result.isError, true, JSON.stringify(result));
    });

    test('idempotency: the same key for another user runs again for that user; a replay for the same user is audited', async () => {
      const u1 = await jwtFor('u1');
      const u2 = await jwtFor('u2');
      const s1 = await openSession(u1);
      const s2 = await openSession(u2);
      const key = { idempotency_key: 'retry-42' };

      const first = await call(u1, s1, key);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const forU2 = await call(u2, s2, key);
      assert.equal(forU2.status, 200);
      assert.notEqual(forU2.body.call_id, first.body.call_id, 'u2 never gets u1’s call');
      assert.notEqual(forU2.body.output?.status, first.body.output?.status);

      const replay = await call(u1, s1, key);
      assert.equal(replay.status, 200);
      assert.equal(replay.body.call_id, first.body.call_id, 'u1’s retry is replayed');
      assert.deepEqual(replay.body.output, first.body.output);

      await inspector.audit.settled();
      const replays = await inspector.db
        .selectFrom('audit_log')
        .selectAll()
        .where('kind', '=', 'call.replayed')
        .where('session_id', '=', s1)
        .execute();
      assert.equal(replays.length, 1, 'the replay left an audit record');
      assert.equal(replays[0]?.user_id, 'u1');
      assert.equal(replays[0]?.rule, 'idempotency.replay');
      assert.equal(replays[0]?.decision, 'allow');
      assert.equal(
        (JSON.parse(replays[0]?.details ?? '{}') as { replayed_call_id?: string }).replayed_call_id,
        first.body.call_id,
      );
      // The audit chain still verifies with the new record kind in it.
      assert.equal((await tg.audit.verify()).ok, true);
    });

    test('a JWT acting for a disabled user opens nothing (REST, MCP); an API key naming them is refused too', async () => {
      const disabled = await jwtFor('u3');
      const refused = await rest('POST', '/v1/sessions', disabled, {});
      assert.equal(refused.status, 401);
      assert.equal(refused.body.code, 'UNAUTHENTICATED');
      await assert.rejects(connect(disabled));
      const byKey = await rest('POST', '/v1/sessions', keyA, { on_behalf_of: 'u3' });
      assert.equal(byKey.status, 404);
      assert.equal(byKey.body.code, 'USER_NOT_FOUND');
      // Benign neighbours: an enabled user, and a user the token vouches for but toolgate does
      // not hold (the token's permissions stand for them).
      assert.equal((await rest('POST', '/v1/sessions', await jwtFor('u1'), {})).status, 201);
      assert.equal((await rest('POST', '/v1/sessions', await jwtFor('carol'), {})).status, 201);
    });

    test('a user disabled after their session opened: the next request with their JWT is refused', async () => {
      const u4 = await jwtFor('u4');
      const session = await openSession(u4);
      assert.equal((await call(u4, session)).status, 200);
      await tg.config.apply(
        [{ kind: 'User', spec: { id: 'u4', permissions: ['billing:read'], enabled: false } }],
        admin,
      );
      const after = await call(u4, session);
      assert.equal(after.status, 401);
      // In-process, the gate refuses the session's user too.
      const row = await inspector.db
        .selectFrom('sessions')
        .select('credential')
        .where('id', '=', session)
        .executeTakeFirstOrThrow();
      await assert.rejects(
        tg.gate.invoke(
          {
            principal: {
              kind: 'agent',
              agentId: 'acme-bot',
              user: { id: 'u4', permissions: [] },
              ...(row.credential ? { credential: row.credential } : {}),
            },
            sessionId: session,
          },
          'lookup_invoice',
          { invoice: 'INV-1' },
        ),
        (err: { code?: string }) => err.code === 'USER_NOT_FOUND',
      );
    });
  });
}
