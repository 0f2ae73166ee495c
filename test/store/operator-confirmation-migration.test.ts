/**
 * Upgrading a database written before operator confirmation (migration 0037), on every backend:
 * the accounts that exist are marked confirmed (`upgrade`), so a running install keeps its
 * approvers; an install that already had two deciders is past its genesis (nobody confirms an
 * account they set up), one with a single admin is not (that admin brings in the second person).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openStore } from '../../src/records/store/index.js';
import { backends, unmigrated } from '../support/backends.js';

const at = '2026-01-01T00:00:00.000Z';
const account = (id: string, roles: string[]) => ({
  id,
  name: id,
  roles: JSON.stringify(roles),
  teams: '[]',
  kind: 'local' as const,
  disabled: 0,
  password_hash: null,
  oidc_issuer: null,
  oidc_subject: null,
  email: null,
  created_at: at,
  created_by: 'admin-token',
  updated_at: at,
});

for (const backend of backends()) {
  describe(`operator confirmation migration on ${backend.name}`, () => {
    const upgrade = async (accounts: ReturnType<typeof account>[]) => {
      const { url, drop } = await backend.fresh();
      const { old, migrator } = unmigrated(backend, url);
      assert.ifError((await migrator.migrateTo('0036_idempotency_outcomes')).error);
      for (const a of accounts) await old.insertInto('operators').values(a).execute();
      await old.destroy();
      const store = await openStore(url);
      const rows = await store.db
        .selectFrom('operators')
        .select(['id', 'set_up_by', 'confirmed_by', 'confirmed_at'])
        .orderBy('id')
        .execute();
      const closed = await store.db
        .selectFrom('meta')
        .select('value')
        .where('key', '=', 'four_eyes_genesis_closed')
        .executeTakeFirst();
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
      assert.equal(closed?.value, 'upgrade');
    });

    test('a single admin is confirmed and the genesis stays open', async () => {
      const { rows, closed } = await upgrade([account('alice', ['admin'])]);
      assert.equal(rows[0]?.confirmed_by, 'upgrade');
      assert.equal(closed, undefined);
    });
  });
}
