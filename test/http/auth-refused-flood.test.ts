/**
 * A stored API key id with a wrong secret, sent again and again by anyone holding the id (an old
 * key that leaked and was revoked): refused and audited, but sampled per peer and key (round 7,
 * F3), not one `auth.refused` record per request. Another peer's refusal is still recorded in
 * full, the real key keeps working, and the summary counts the flood per peer hash.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Actor } from '../../src/core/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { eventDetails, openWorld, rawPost, type World } from '../support/world.js';

const admin: Actor = { id: 'admin', via: 'library' };
let world: World;
let tg: Gateway;
let app: FastifyInstance;
let inspector: Store;
let port = 0;
let apiKey = '';

before(async () => {
  world = await openWorld({
    actor: admin,
    agents: [{ id: 'web-bot' }],
    rest: { adminToken: 'authref-test-admin-token-0123456789abcdef' },
  });
  tg = world.tg;
  app = world.app as FastifyInstance;
  apiKey = world.keys['web-bot'] ?? '';
  inspector = await openStore(world.db);
  port = Number(new URL(world.base).port);
});
after(async () => {
  await inspector.close();
  await world.close();
});

/** POST /v1/sessions with this bearer from this loopback address; the status. */
const openSession = async (key: string, from = '127.0.0.1') =>
  (
    await rawPost(
      port,
      '/v1/sessions',
      { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      '{}',
      from,
    )
  ).status;
const recorded = (action: string) => eventDetails(inspector, action);

test('a flood of wrong secrets for a stored key id writes a bounded number of records; another peer is still recorded; the real key works', async () => {
  const keyId = apiKey.slice('tgk_'.length, 'tgk_'.length + 16);
  const wrong = `tgk_${keyId}_${'A'.repeat(43)}`;
  for (let i = 0; i < 60; i++) assert.equal(await openSession(wrong), 401);
  const flood = await recorded('auth.refused');
  assert.ok(flood.length >= 1 && flood.length <= 10, `${flood.length} records for 60 refusals`);
  assert.deepEqual(flood[0], {
    credential: `key:${keyId}`,
    reason: 'api_key_refused',
    remote: tg.audit.writer.pseudonyms.token('127.0.0.1'),
    sampled: true,
  });
  // Another peer with the same key id: its own sample, recorded in full.
  assert.equal(await openSession(wrong, '127.0.0.2'), 401);
  const last = (await recorded('auth.refused')).at(-1);
  assert.equal(last?.remote, tg.audit.writer.pseudonyms.token('127.0.0.2'));
  // The benign neighbour: the real key opens a session.
  assert.equal(await openSession(apiKey), 201);
  // The window ends when the gateway closes: the summary counts the rest per peer hash.
  await app.close();
  await tg.close();
  const summary = (await recorded('auth.refused.summary')).at(-1);
  assert.ok(summary, 'a summary is written');
  assert.equal(Number(summary.recorded) + Number(summary.not_recorded), 61);
  const byPeer = summary.not_recorded_by_peer as Record<string, number>;
  assert.equal(byPeer[tg.audit.writer.pseudonyms.token('127.0.0.1')], summary.not_recorded);
});
