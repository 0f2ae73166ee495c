/**
 * A destination set's member cap under concurrency (attack round 22, Y15; docs/policies.md "Live
 * sets": a set holds at most 10,000 members): members are counted and added under one lock of the
 * set (a PostgreSQL advisory lock; SQLite's writes run alone anyway), by `destination-sets add`
 * and by `apply` alike. Twelve adds of ten new members each at once to a set of 9,990 leave
 * exactly 10,000: one succeeds, eleven are refused naming the cap. The benign neighbour: adds that
 * fit, at once, all succeed.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { DestinationSets, MAX_SET_MEMBERS } from '../../src/domain/policy/index.js';
import { openStore } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';

const admin: Actor = { id: 'sets-admin', via: 'library' };
const host = (prefix: string, i: number) => `h${i}.${prefix}.example.com`;

for (const backend of backends()) {
  describe(`a destination set's member cap under concurrency on ${backend.name}`, () => {
    test('twelve adds at once to a nearly full set: the set never passes its cap', async () => {
      const fresh = await backend.fresh();
      const store = await openStore(fresh.url);
      try {
        const sets = new DestinationSets(store.db);
        await sets.create({ name: 'big', kind: 'host' }, admin);
        const base = Array.from({ length: MAX_SET_MEMBERS - 10 }, (_, i) => host('base', i));
        for (let i = 0; i < base.length; i += 1000) {
          await sets.add('big', base.slice(i, i + 1000), admin);
        }
        assert.equal((await sets.get('big')).members, MAX_SET_MEMBERS - 10);
        const results = await Promise.allSettled(
          Array.from({ length: 12 }, (_, k) =>
            sets.add(
              'big',
              Array.from({ length: 10 }, (_, i) => host(`new${k}`, i)),
              admin,
            ),
          ),
        );
        assert.equal((await sets.get('big')).members, MAX_SET_MEMBERS);
        assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
        for (const r of results) {
          if (r.status === 'fulfilled') continue;
          assert.equal((r.reason as { code?: string }).code, 'INPUT_INVALID');
          assert.match(String((r.reason as Error).message), /at most 10000 members/);
        }
        // Benign neighbour: adds that fit, at once, all succeed.
        await sets.create({ name: 'small', kind: 'host' }, admin);
        const small = await Promise.all(
          Array.from({ length: 8 }, (_, k) => sets.add('small', [host('s', k)], admin)),
        );
        assert.deepEqual(
          small.map((r) => r.added.length),
          Array(8).fill(1),
        );
        assert.equal((await sets.get('small')).members, 8);
      } finally {
        await store.close();
        await fresh.drop();
      }
    });
  });
}
