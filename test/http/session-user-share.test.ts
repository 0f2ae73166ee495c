/**
 * One user of an agent holds at most a share of the agent's session slots (docs/operations.md
 * "Limits and overload"): past it that user's open is LIMIT_REACHED (`sessions_per_user`), while
 * another user of the same agent and the agent's own key still open theirs. On MCP 2026-07-28 the
 * agent's cap is the same structured refusal as on REST and the 2025 era (-32062, 429,
 * Retry-After), never an internal error. JWTs signed here with a local JWKS.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type generateKeyPair, SignJWT } from 'jose';
import { validTool } from '../support/tools.js';
import {
  MODERN_ENVELOPE,
  openWorld,
  postMcp,
  signingKeyWithJwks,
  type World,
} from '../support/world.js';

const ISSUER = 'https://idp.example.com';
const AUDIENCE = 'toolgate';
const CAP = 4;
type Key = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

let dir: string;
let privateKey: Key;
let world: World;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-user-share-'));
  privateKey = await signingKeyWithJwks(join(dir, 'jwks.json'));
  world = await openWorld({
    options: {
      db: `sqlite:${join(dir, 'tg.db')}`,
      caps: { maxSessionsPerAgent: CAP },
      jwt: {
        issuer: ISSUER,
        audience: AUDIENCE,
        jwksFile: join(dir, 'jwks.json'),
        userClaim: 'act_for',
        permissionsClaim: 'scope',
      },
    },
    tools: [validTool()],
    agents: [{ id: 'bot', capabilities: ['billing:read'] }],
    rest: true,
  });
  await world.tg.config.apply(
    ['u1', 'u2'].map((id) => ({ kind: 'User', spec: { id, permissions: ['billing:read'] } })),
    world.admin,
  );
});

after(async () => {
  await world.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

function tokenFor(user: string): Promise<string> {
  return new SignJWT({ act_for: user, scope: 'billing:read' })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setSubject('bot')
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setJti(randomUUID())
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(privateKey);
}

async function modernList(token: string) {
  const res = await postMcp(
    world.base,
    { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: MODERN_ENVELOPE } },
    token,
    { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
  );
  const body = (await res.json()) as {
    error?: { code: number; message: string; data?: { code?: string; details?: unknown } };
    result?: { tools: unknown[] };
  };
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body };
}

test('one user takes at most half the slots; another user and the key still open theirs', async () => {
  const u1 = await tokenFor('u1');
  const mine: string[] = [];
  for (let i = 0; i < CAP / 2; i++) {
    const r = await world.send('POST', '/v1/sessions', {}, u1);
    assert.equal(r.status, 201, r.text);
    mine.push(String(r.body.id));
  }
  const refused = await world.send('POST', '/v1/sessions', {}, await tokenFor('u1'));
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('retry-after'), '30');
  assert.equal(refused.body.code, 'LIMIT_REACHED');
  assert.deepEqual(refused.body.details, {
    limit: 'sessions_per_user',
    max: CAP / 2,
    retryAfterSeconds: 30,
  });
  assert.match(String(refused.body.message), /user u1/);

  // Benign neighbours: another user of the agent, and the agent's own key.
  const other = await world.send('POST', '/v1/sessions', {}, await tokenFor('u2'));
  assert.equal(other.status, 201, other.text);
  const keyed = await world.send('POST', '/v1/sessions', {}, world.keys.bot);
  assert.equal(keyed.status, 201, keyed.text);

  // The agent is now at its cap: MCP 2026-07-28 says so as REST and 2025 do.
  const full = await modernList(await tokenFor('u2'));
  assert.equal(full.status, 429, JSON.stringify(full.body));
  assert.equal(full.retryAfter, '30');
  assert.equal(full.body.error?.code, -32062);
  assert.equal(full.body.error?.data?.code, 'LIMIT_REACHED');
  assert.deepEqual(full.body.error?.data?.details, {
    limit: 'sessions_per_agent',
    max: CAP,
    retryAfterSeconds: 30,
  });

  // A freed slot lets the same request through.
  assert.equal((await world.send('DELETE', `/v1/sessions/${mine[0]}`, undefined, u1)).status, 204);
  const listed = await modernList(await tokenFor('u2'));
  assert.equal(listed.status, 200, JSON.stringify(listed.body));
  assert.ok((listed.body.result?.tools.length ?? 0) > 0);
});
