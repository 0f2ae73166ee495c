/**
 * Upgrading a database written before the set-up latch (migration 0038), on every backend: an
 * install with an account holding `admin` and a second factor is set up (`meta.first_admin_set_up`,
 * so the bootstrap token's fresh-install powers stay ended even if that factor is removed later;
 * attack round 10, F3), also when that admin is disabled; one whose admin has no factor yet, or
 * whose only factor is an approver's, is still a fresh install.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Kysely, Migrator } from 'kysely';
import { type Database, openStore } from '../../src/records/store/index.js';
import { migrationProvider } from '../../src/records/store/migrations/index.js';
import { createPostgresDialect } from '../../src/records/store/postgres/dialect.js';
import { createSqliteDialect } from '../../src/records/store/sqlite/dialect.js';
import { backends } from '../support/backends.js';

const at = '2026-01-01T00:00:00.000Z';
const account = (id: string, roles: string[], disabled = 0) => ({
  id,
  name: id,
  roles: JSON.stringify(roles),
  teams: '[]',
  kind: 'local' as const,
  disabled,
  password_hash: null,
  oidc_issuer: null,
  oidc_subject: null,
  email: null,
  created_at: at,
  created_by: 'admin-token',
  updated_at: at,
});
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
    const upgrade = async (accounts: ReturnType<typeof account>[], armed: string[]) => {
      const { url, drop } = await backend.fresh();
      const target = backend.name === 'sqlite' ? url.slice('sqlite:'.length) : url;
      const old = new Kysely<Database>({
        dialect:
          backend.name === 'sqlite'
            ? createSqliteDialect(target).dialect
            : createPostgresDialect(target),
      });
      const migrator = new Migrator({ db: old, provider: migrationProvider(backend.name) });
      assert.ifError((await migrator.migrateTo('0037_operator_confirmation')).error);
      for (const a of accounts) await old.insertInto('operators').values(a).execute();
      for (const id of armed)
        await old.insertInto('operator_second_factors').values(factor(id)).execute();
      await old.destroy();
      const store = await openStore(url);
      const latch = await store.db
        .selectFrom('meta')
        .select('value')
        .where('key', '=', 'first_admin_set_up')
        .executeTakeFirst();
      await store.close();
      await drop();
      return latch?.value;
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
  });
}
