/**
 * Upgrading a database written before operator confirmation (migration 0037), on every backend:
 * the accounts that exist are marked confirmed (`upgrade`), so a running install keeps its
 * approvers; an install that already had two deciders is past its genesis (nobody confirms an
 * account they set up), one with a single admin is not (that admin brings in the second person).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openStore } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { operatorRow as account, metaValue, migratedTo } from '../support/store-rows.js';

const at = '2026-01-01T00:00:00.000Z';

for (const backend of backends()) {
  describe(`operator confirmation migration on ${backend.name}`, () => {
    const upgrade = async (accounts: ReturnType<typeof account>[]) => {
      const { url, drop, old } = await migratedTo(backend, '0036_idempotency_outcomes', accounts);
      await old.destroy();
      const store = await openStore(url);
      const rows = await store.db
        .selectFrom('operators')
        .select(['id', 'set_up_by', 'confirmed_by', 'confirmed_at'])
        .orderBy('id')
        .execute();
      const closed = await metaValue(store, 'four_eyes_genesis_closed');
      await store.close();
      await drop();
      return { rows, closed };
    };

    test('existing accounts are confirmed; two deciders close the genesis', async () => {
      const { rows, closed } = await upgrade([
        account('alice', ['admin']),
        account('bob', ['approver']),
        account('audrey', ['auditor']),
      ]);
      assert.deepEqual(
        rows.map((r) => [r.id, r.set_up_by, r.confirmed_by, r.confirmed_at]),
        [
          ['alice', null, 'upgrade', at],
          ['audrey', null, 'upgrade', at],
          ['bob', null, 'upgrade', at],
        ],
      );
      assert.equal(closed, 'upgrade');
    });

    test('a single admin is confirmed and the genesis stays open', async () => {
      const { rows, closed } = await upgrade([account('alice', ['admin'])]);
      assert.equal(rows[0]?.confirmed_by, 'upgrade');
      assert.equal(closed, undefined);
    });
  });
}
