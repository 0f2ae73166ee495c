/**
 * Upgrading a database written before the set-up latch (migration 0038), on every backend: an
 * install with an account holding `admin` and a second factor is set up (`meta.first_admin_set_up`,
 * so the bootstrap token's fresh-install powers stay ended even if that factor is removed later;
 * attack round 10, F3), also when that admin is disabled; one whose admin has no factor yet, or
 * whose only factor is an approver's, is still a fresh install. Upgrading one written before the
 * latch closed at a person's first act (migration 0040; attack round 11, F1): an install where an
 * operator account acted as itself (a record by `operator:<id>`) or a console session exists is
 * set up; one where only the bootstrap token acted is not.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openStore } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { operatorRow as account, metaValue, migratedTo } from '../support/store-rows.js';

const at = '2026-01-01T00:00:00.000Z';
const factor = (operatorId: string) => ({
  operator_id: operatorId,
  version: 1,
  key_id: 'k',
  nonce: 'n',
  ciphertext: 'c',
  tag: 't',
  last_step: null,
  enrolled_at: at,
  enrolled_by: 'admin-token',
});

for (const backend of backends()) {
  describe(`first admin set-up migration on ${backend.name}`, () => {
    const upgrade = async (
      accounts: ReturnType<typeof account>[],
      armed: string[],
      actors: string[] = [],
      from = '0037_operator_confirmation',
    ) => {
      const { url, drop, old } = await migratedTo(backend, from, accounts);
      for (const id of armed)
        await old.insertInto('operator_second_factors').values(factor(id)).execute();
      for (const actor of actors) {
        await old
          .insertInto('events')
          .values({
            at,
            actor,
            via: 'rest',
            action: 'agent.created',
            subject: 'agent:a',
            details: '{}',
          })
          .execute();
      }
      await old.destroy();
      const store = await openStore(url);
      const latch = await metaValue(store, 'first_admin_set_up');
      await store.close();
      await drop();
      return latch;
    };

    test('an admin with a second factor: set up, for good', async () => {
      assert.equal(await upgrade([account('alice', ['admin', 'approver'])], ['alice']), 'upgrade');
    });

    test('the only admin with a factor disabled: still set up', async () => {
      assert.equal(await upgrade([account('alice', ['admin'], 1)], ['alice']), 'upgrade');
    });

    test('the benign neighbours: an admin without a factor, an approver with one: a fresh install', async () => {
      assert.equal(
        await upgrade([account('alice', ['admin']), account('bob', ['approver'])], ['bob']),
        undefined,
      );
    });

    test('0040: an operator account acted as itself before the upgrade: set up', async () => {
      const alice = [account('alice', ['admin'])];
      assert.equal(
        await upgrade(alice, [], ['admin-token', 'operator:alice'], '0039_session_last_used'),
        'upgrade',
      );
    });

    test('0040, the benign neighbour: only the bootstrap token acted: still a fresh install', async () => {
      const alice = [account('alice', ['admin'])];
      assert.equal(
        await upgrade(alice, [], ['admin-token', 'system:health'], '0039_session_last_used'),
        undefined,
      );
    });
  });
}
