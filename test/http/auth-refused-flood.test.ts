/**
 * A stored API key id with a wrong secret, sent again and again by anyone holding the id (an old
 * key that leaked and was revoked): refused and audited, but sampled per peer and key (round 7,
 * F3), not one `auth.refused` record per request. Another peer's refusal is still recorded in
 * full, the real key keeps working, and the summary counts the flood per peer hash.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Actor } from '../../src/core/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';

const admin: Actor = { id: 'admin', via: 'library' };
let tg: Gateway;
let app: FastifyInstance;
let inspector: Store;
let drop: () => Promise<void>;
let port = 0;
let apiKey = '';

before(async () => {
  const sqlite = backends().find((b) => b.name === 'sqlite');
  assert.ok(sqlite);
  const fresh = await sqlite.fresh();
  drop = fresh.drop;
  tg = await openGateway({ db: fresh.url });
  await tg.config.apply([{ kind: 'Agent', spec: { id: 'web-bot', owner: 'qa' } }], admin);
  apiKey = (await tg.keys.issue('web-bot', admin)).apiKey;
  inspector = await openStore(fresh.url);
  app = await buildServer(tg, { adminToken: 'authref-test-admin-token-0123456789abcdef' });
  port = Number(new URL(await app.listen({ host: '127.0.0.1', port: 0 })).port);
});
after(async () => {
  await app.close().catch(() => {});
  await tg.close().catch(() => {});
  await inspector.close();
  await drop();
});

/** POST /v1/sessions with this bearer from this loopback address; the status. */
const openSession = (key: string, from = '127.0.0.1') =>
  new Promise<number>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        localAddress: from,
        path: '/v1/sessions',
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end('{}');
  });
const recorded = async (action: string) =>
  (
    await inspector.db
      .selectFrom('events')
      .select('details')
      .where('action', '=', action)
      .orderBy('seq')
      .execute()
  ).map((e) => JSON.parse(e.details) as Record<string, unknown>);

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
