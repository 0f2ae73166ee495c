/**
 * Upgrading a database written before channel URLs were sealed (migration 0042), on every backend:
 * the channels keep working (delivery reads their URL as stored), the first channel change seals
 * every URL still in plain (none left in `url`), and after it the same URL again in one team is
 * refused as before the upgrade, while another team may hold it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ToolgateError } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { openGateway } from '../../src/host/toolgate.js';
import { openStore } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { migratedTo } from '../support/store-rows.js';
import { LOOPBACK_OUTBOUND } from '../support/webhook-receiver.js';

const actor = { id: 'upgrade-test', via: 'library' } as const;
const plain = (id: string, team: string, url: string) => ({
  id,
  team,
  kind: 'webhook' as const,
  url,
  created_at: '2026-01-01T00:00:00.000Z',
  created_by: 'admin-token',
});

for (const backend of backends()) {
  describe(`owner channel sealing migration on ${backend.name}`, () => {
    test('plain URLs keep working, are sealed by the next change, and stay one per team', async () => {
      const { url, drop, old } = await migratedTo(backend, '0041_applied_objects', []);
      const first = 'http://127.0.0.1:9/hooks/T1/B1/legacy-one';
      const second = 'http://127.0.0.1:9/hooks/T2/B2/legacy-two';
      await old
        .insertInto('owner_channels')
        // Rows of the table as it was before 0042: the schema type has the columns 0042 adds.
        .values([plain('ch_old1', 'billing', first), plain('ch_old2', 'ops', second)] as never)
        .execute();
      await old.destroy();
      const tg = await openGateway({
        db: url,
        masterKey: MasterKey.generate(),
        outbound: LOOPBACK_OUTBOUND,
        detectors: false,
        health: false,
      });
      try {
        assert.deepEqual(
          (await tg.ownerChannels.urlsOf('billing')).map((c) => c.url),
          [first],
        );
        assert.deepEqual(
          (await tg.ownerChannels.list()).map((c) => [c.id, c.url_hint, c.name]),
          [
            ['ch_old1', 'http://127.0.0.1:9/…', null],
            ['ch_old2', 'http://127.0.0.1:9/…', null],
          ],
        );
        await tg.ownerChannels.add({ team: 'ops', url: 'http://127.0.0.1:9/hooks/new' }, actor);
        for (const team of ['billing', 'ops']) {
          const urls = (await tg.ownerChannels.urlsOf(team)).map((c) => c.url);
          assert.ok(urls.includes(team === 'billing' ? first : second), team);
        }
        // The same URL again in the team that holds it: refused; in another team: taken.
        await assert.rejects(
          tg.ownerChannels.add({ team: 'billing', url: first }, actor),
          (err: ToolgateError) => err.code === 'INPUT_INVALID',
        );
        await tg.ownerChannels.add({ team: 'ops', url: first }, actor);
      } finally {
        await tg.close();
      }
      // No URL is left in plain: every row is sealed.
      const store = await openStore(url);
      const left = await store.db
        .selectFrom('owner_channels')
        .select(['id', 'url', 'url_sealed'])
        .execute();
      await store.close();
      await drop();
      assert.equal(left.length, 4);
      for (const row of left) {
        assert.equal(row.url, '', row.id);
        assert.ok(row.url_sealed !== null && !row.url_sealed.includes('legacy'), row.id);
      }
    });
  });
}
