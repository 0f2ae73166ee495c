/**
 * Refusals made before authentication are sampled per peer and per value (round 7, F6): a
 * stranger's junk refusals do not hide the next real one, another peer's refusal is recorded in
 * full beside a flood, and the summary names the flooding peer by its keyed hash. The bound holds:
 * repeats from one peer are counted, not recorded. Raw HTTP from two loopback addresses.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Gateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { eventDetails, openWorld, rawPost, type World } from '../support/world.js';

describe('/mcp refusals are sampled per peer and per value', () => {
  let world: World;
  let tg: Gateway;
  let app: FastifyInstance;
  let port = 0;
  let inspector: Store;

  before(async () => {
    // The defaults: 5 in full per peer and minute, 5 more for values new in the minute.
    world = await openWorld({ rest: { adminToken: 'sampling-test-admin-token-0123456789abcdef' } });
    tg = world.tg;
    app = world.app as FastifyInstance;
    inspector = await openStore(world.db);
    port = Number(new URL(world.base).port);
  });
  after(async () => {
    await inspector.close();
    await world.close();
  });

  /** POST /mcp with this Origin and no credential, from this loopback address. */
  const probe = async (origin: string, from = '127.0.0.1') =>
    (await rawPost(port, '/mcp', { 'content-type': 'application/json', origin }, '{}', from))
      .status;
  const recorded = (action: string) => eventDetails(inspector, action);
  const token = (v: string) => tg.audit.writer.pseudonyms.token(v);

  test('five junk Origins do not hide the next real one; repeats of one Origin are counted, not recorded', async () => {
    for (let i = 0; i < 5; i++) assert.equal(await probe(`https://junk${i}.example`), 403);
    assert.equal(await probe('https://evil-real-attacker.example'), 403);
    const values = (await recorded('mcp.origin_refused')).map((d) => d.value);
    assert.ok(
      values.includes(token('https://evil-real-attacker.example')),
      'the real one is recorded',
    );
    // The benign neighbour of the bound: the same Origin again and again is one value.
    const before = values.length;
    for (let i = 0; i < 20; i++) assert.equal(await probe('https://junk0.example'), 403);
    assert.equal((await recorded('mcp.origin_refused')).length, before);
  });

  test("one peer's flood of new values is bounded and does not hide another peer's refusal; the summary counts per peer hash", async () => {
    const before = (await recorded('mcp.origin_refused')).length;
    for (let i = 0; i < 40; i++) assert.equal(await probe(`https://flood-${i}.example`), 403);
    const flood = (await recorded('mcp.origin_refused')).length - before;
    assert.ok(flood <= 10, `${flood} records for 40 refusals from one peer`);
    // Another peer, sending an Origin the flood already sent: recorded in full, with its peer.
    assert.equal(await probe('https://junk0.example', '127.0.0.2'), 403);
    const last = (await recorded('mcp.origin_refused')).at(-1);
    assert.equal(last?.remote, token('127.0.0.2'));
    assert.equal(last?.value, token('https://junk0.example'));
    // The window ends when the server stops: one summary naming the flooding peer by its hash.
    await app.close();
    const summary = (await recorded('mcp.origin_refused.summary')).at(-1);
    assert.ok(summary, 'a summary is written');
    const byPeer = summary.not_recorded_by_peer as Record<string, number>;
    assert.equal(byPeer[token('127.0.0.1')], summary.not_recorded);
    assert.equal(byPeer[token('127.0.0.2')], undefined);
    assert.ok(Number(summary.not_recorded) >= 40);
  });
});
