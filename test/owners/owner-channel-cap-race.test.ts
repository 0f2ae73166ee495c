/**
 * A team's channel cap under concurrency (attack round 22, Y15; docs/operations.md "Owner
 * notices": at most ten webhook channels per team): the count and the insert run under one lock
 * of the team (a PostgreSQL advisory lock; SQLite's writes run alone anyway), for `channels add`
 * and for `apply` alike. Sixteen adds at once leave ten channels and six refusals naming the cap;
 * an apply racing adds never takes the team past ten. The benign neighbours: adds under the cap at
 * once all succeed, for another team as well.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { backends } from '../support/backends.js';
import { LOOPBACK_OUTBOUND } from '../support/webhook-receiver.js';
import { openWorld, type Reply, type World } from '../support/world.js';

const ADMIN_TOKEN = 'admin-token-for-channel-cap-races-0123456789ab';
const CAP = 10;

const url = (team: string, i: number) => `http://127.0.0.1:9/${team}/${i}`;

for (const backend of backends()) {
  describe(`a team's channel cap under concurrency on ${backend.name}`, () => {
    let w: World;
    before(async () => {
      w = await openWorld({
        backend,
        rest: { adminToken: ADMIN_TOKEN },
        options: { outbound: LOOPBACK_OUTBOUND, masterKey: MasterKey.generate() },
      });
    });
    after(() => w?.close());

    const add = (team: string, i: number) =>
      w.send('POST', '/v1/owner-channels', { team, url: url(team, i) }, ADMIN_TOKEN);
    const count = async (team: string) =>
      (await w.tg.ownerChannels.list()).filter((c) => c.team === team).length;
    const refusedByCap = (r: Reply) => {
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.code, 'INPUT_INVALID', r.text);
      assert.match(r.text, /channels\.cap/);
    };

    test('sixteen adds at once: ten channels, six refused by the cap', async () => {
      const replies = await Promise.all(Array.from({ length: 16 }, (_, i) => add('capx', i)));
      const made = replies.filter((r) => r.status === 201);
      assert.equal(made.length, CAP, replies.map((r) => r.status).join(' '));
      for (const r of replies.filter((x) => x.status !== 201)) refusedByCap(r);
      assert.equal(await count('capx'), CAP);
      refusedByCap(await add('capx', 99));
    });

    test('benign neighbour: adds under the cap at once all succeed', async () => {
      const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => add('capy', i)));
      assert.deepEqual(
        replies.map((r) => r.status),
        Array(6).fill(201),
      );
      assert.equal(await count('capy'), 6);
    });

    test('an apply racing adds never takes the team past its cap', async () => {
      const docs = Array.from({ length: 4 }, (_, i) => ({
        kind: 'OwnerChannel',
        spec: { name: `c${i}`, team: 'capz', url: url('capz', 100 + i) },
      }));
      const [applied, ...added] = await Promise.all([
        w.send('POST', '/v1/apply?set=capz', docs, ADMIN_TOKEN),
        ...Array.from({ length: 9 }, (_, i) => add('capz', i)),
      ]);
      assert.ok(applied);
      const n = await count('capz');
      assert.ok(n <= CAP, `capz has ${n} channels`);
      const made = added.filter((r) => r.status === 201).length;
      if (applied.status === 200) {
        assert.equal(n, made + docs.length);
      } else {
        assert.equal(applied.status, 422, applied.text);
        assert.match(applied.text, /channels\.cap/);
        assert.equal(n, made);
      }
      for (const r of added.filter((x) => x.status !== 201)) refusedByCap(r);
    });
  });
}
