/**
 * Standing streams are bounded per user as well as per agent (docs/security-model.md "Shared
 * slots, streams and breakers"): a user's tokens, through two agents and as many token strings as
 * it likes, share one bound of open MCP 2026-07-28 `subscriptions/listen` streams (429 past it),
 * while another user of the same agents still opens theirs. JWTs signed here with a local JWKS.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Actor } from '../../src/core/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { validTool } from '../support/tools.js';
import {
  actForJwt,
  actForToken,
  postListen,
  type SigningKey,
  signingKeyWithJwks,
} from '../support/world.js';

const admin: Actor = { id: 'admin', via: 'library' };
const ISSUER = 'https://idp.example.com';
const AUDIENCE = 'toolgate';
const PER_USER = 2;

let dir: string;
let privateKey: SigningKey;
let tg: Gateway;
let app: FastifyInstance;
let base: string;
const open: ReadableStreamDefaultReader<Uint8Array>[] = [];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-standing-users-'));
  privateKey = await signingKeyWithJwks(join(dir, 'jwks.json'));
  tg = await openGateway({
    db: `sqlite:${join(dir, 'tg.db')}`,
    jwt: actForJwt(dir, ISSUER, AUDIENCE),
  });
  await tg.config.apply(
    [
      { kind: 'Tool', spec: validTool() },
      ...['bot-a', 'bot-b'].flatMap((id) => [
        { kind: 'Agent', spec: { id, owner: 'qa' } },
        { kind: 'Grant', spec: { agent: id, capabilities: ['billing:read'] } },
      ]),
      { kind: 'User', spec: { id: 'u1', permissions: ['billing:read'] } },
      { kind: 'User', spec: { id: 'u2', permissions: ['billing:read'] } },
    ],
    admin,
  );
  app = await buildServer(tg, {
    adminToken: 'standing-users-admin-token-0123456789abcdef',
    standing: { streams: { max: 64, maxPerAgent: 32, maxPerUser: PER_USER } },
  });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});

after(async () => {
  for (const r of open.splice(0)) await r.cancel().catch(() => {});
  await app.close();
  await tg.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

/** A fresh token string of `agent` acting for `user` (each one different: its own jti). */
function tokenFor(agent: string, user: string): Promise<string> {
  return actForToken(privateKey, agent, user, ISSUER, AUDIENCE);
}

async function listen(token: string, at = base) {
  const res = await postListen(at, token, 3);
  if (res.status !== 200 || !res.body) {
    const body = (await res.json()) as { error?: { data?: { details?: unknown } } };
    return { status: res.status, details: body.error?.data?.details, reader: null };
  }
  const reader = res.body.getReader();
  open.push(reader);
  const decoder = new TextDecoder();
  let text = '';
  while (!/acknowledged/.test(text)) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += decoder.decode(chunk.value);
  }
  assert.match(text, /acknowledged/);
  return { status: 200, details: undefined, reader };
}

test("one user's tokens, through two agents, share one bound of streams; another user opens theirs", async () => {
  assert.equal((await listen(await tokenFor('bot-a', 'u1'))).status, 200);
  assert.equal((await listen(await tokenFor('bot-b', 'u1'))).status, 200);
  // Attack: a third token string of the same user, through an agent with room to spare.
  const refused = await listen(await tokenFor('bot-a', 'u1'));
  assert.deepEqual(
    { status: refused.status, details: refused.details },
    { status: 429, details: { limit: 'streams_per_user', max: PER_USER, retryAfterSeconds: 5 } },
  );
  // Benign neighbour: another user of the same agent.
  assert.equal((await listen(await tokenFor('bot-a', 'u2'))).status, 200);
});

test('with every stream place taken, the oldest stream of the agent holding the most makes room', {
  timeout: 30_000,
}, async () => {
  const small = await buildServer(tg, {
    adminToken: 'standing-users-admin-token-0123456789abcdef',
    standing: { streams: { max: 3, maxPerAgent: 32, maxPerUser: 32 } },
  });
  const at = await small.listen({ host: '127.0.0.1', port: 0 });
  try {
    const oldest = await listen(await tokenFor('bot-a', 'u1'), at);
    assert.equal((await listen(await tokenFor('bot-a', 'u2'), at)).status, 200);
    const theirs = await listen(await tokenFor('bot-b', 'u2'), at);
    // A newcomer: bot-a holds the most, so its oldest stream is closed for it.
    assert.equal((await listen(await tokenFor('bot-b', 'u1'), at)).status, 200);
    // The evicted stream ends (the server cut it: done, or the connection terminated).
    let ended = false;
    try {
      for (;;) {
        const chunk = await oldest.reader?.read();
        if (!chunk || chunk.done) break;
      }
      ended = true;
    } catch {
      ended = true;
    }
    assert.ok(ended, 'the evicted stream ended');
    assert.equal(theirs.status, 200, "the smaller holder's stream stays");
  } finally {
    for (const r of open.splice(0)) await r.cancel().catch(() => {});
    await small.close();
  }
});

/** Reads a stream until it ends (done, or the connection cut): whether it ended. */
async function ended(reader: ReadableStreamDefaultReader<Uint8Array> | null): Promise<boolean> {
  try {
    for (;;) {
      const chunk = await reader?.read();
      if (!chunk || chunk.done) return true;
    }
  } catch {
    return true;
  }
}

test("a user holds at most the session share of an agent's streams; at the agent's bound a smaller holder closes the biggest holder's oldest", {
  timeout: 30_000,
}, async () => {
  // bot-a may hold 4 streams: a user of it (the session share, 0.5) 2.
  const small = await buildServer(tg, {
    adminToken: 'standing-users-admin-token-0123456789abcdef',
    standing: { streams: { max: 64, maxPerAgent: 4, maxPerUser: 64 } },
  });
  const at = await small.listen({ host: '127.0.0.1', port: 0 });
  const key = (await tg.keys.issue('bot-a', admin)).apiKey;
  try {
    const u1Oldest = await listen(await tokenFor('bot-a', 'u1'), at);
    assert.equal((await listen(await tokenFor('bot-a', 'u1'), at)).status, 200);
    // Attack: u1's third stream of bot-a, with the agent's bound not yet reached.
    const over = await listen(await tokenFor('bot-a', 'u1'), at);
    assert.deepEqual(
      { status: over.status, details: over.details },
      { status: 429, details: { limit: 'streams_per_user', max: 2, retryAfterSeconds: 5 } },
    );
    // Benign neighbour: u2 takes the rest of bot-a's bound.
    const u2Oldest = await listen(await tokenFor('bot-a', 'u2'), at);
    const u2Newest = await listen(await tokenFor('bot-a', 'u2'), at);
    assert.equal(u2Newest.status, 200);
    // The agent's own key, holding none: the oldest stream of a biggest holder (u1's) makes room.
    assert.equal((await listen(key, at)).status, 200);
    assert.ok(await ended(u1Oldest.reader), "u1's oldest stream ended");
    // Again: now u2 holds the most, and its oldest stream goes.
    assert.equal((await listen(key, at)).status, 200);
    assert.ok(await ended(u2Oldest.reader), "u2's oldest stream ended");
    // A principal at its share is refused, whoever holds more: no eviction for it.
    const keyOver = await listen(key, at);
    assert.deepEqual(
      { status: keyOver.status, details: keyOver.details },
      { status: 429, details: { limit: 'streams_per_agent', max: 4, retryAfterSeconds: 5 } },
    );
  } finally {
    for (const r of open.splice(0)) await r.cancel().catch(() => {});
    await small.close();
  }
});
