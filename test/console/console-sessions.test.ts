/**
 * Console sessions in the database (SQLite and PostgreSQL): only the hash of the browser's id is
 * stored; a session ends when idle past its timeout, at its absolute end, or at logout — for
 * every replica (a second gateway on the same database) at once; a pending single sign-on login
 * is taken once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BOOTSTRAP_OPERATOR, type Operator } from '../../src/domain/operators/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { openStore } from '../../src/records/store/index.js';
import { type Backend, backends } from '../support/backends.js';

const alice: Operator = {
  id: 'alice',
  name: 'Alice',
  roles: ['approver'],
  teams: ['support-team'],
  authenticatedBy: 'password+totp',
};

for (const backend of backends()) {
  describe(`console sessions on ${backend.name}`, () => {
    let now = Date.parse('2026-03-01T10:00:00.000Z');
    const clock = () => new Date(now);
    let db: Awaited<ReturnType<Backend['fresh']>>;
    let a: Gateway;
    let b: Gateway;

    before(async () => {
      db = await backend.fresh();
      a = await openGateway({ db: db.url, clock });
      b = await openGateway({ db: db.url, clock });
      // A session acts on a stored account: Alice's, as the store has it.
      await a.admin.operators.create(BOOTSTRAP_OPERATOR, {
        id: alice.id,
        name: alice.name,
        roles: alice.roles,
        teams: alice.teams,
      });
    });
    after(async () => {
      await a?.close();
      await b?.close();
      await db?.drop();
    });

    test('a session is seen by another replica; the database holds only a hash of its id', async () => {
      const grant = await a.admin.consoleSessions.create(alice);
      assert.ok(Buffer.from(grant.secret, 'base64url').length === 32);
      const seen = await b.admin.consoleSessions.lookup(grant.secret);
      assert.deepEqual(seen?.operator, alice);
      const store = await openStore(db.url);
      try {
        const rows = await store.db.selectFrom('console_sessions').selectAll().execute();
        assert.ok(rows.length >= 1);
        assert.ok(!JSON.stringify(rows).includes(grant.secret), 'the id itself is never stored');
      } finally {
        await store.close();
      }
      assert.equal(await b.admin.consoleSessions.lookup(`${grant.secret}x`), null);
      assert.equal(await b.admin.consoleSessions.lookup(''), null);
    });

    test('activity keeps a session alive; idle past the timeout it is gone', async () => {
      const grant = await a.admin.consoleSessions.create(alice, { idleMs: 60_000 });
      now += 50_000;
      assert.ok(await a.admin.consoleSessions.lookup(grant.secret), 'used within the timeout');
      now += 50_000;
      assert.ok(await b.admin.consoleSessions.lookup(grant.secret), 'the use reset the clock');
      now += 60_000;
      assert.equal(await a.admin.consoleSessions.lookup(grant.secret), null, 'idle too long');
      now -= 120_000;
      assert.equal(await a.admin.consoleSessions.lookup(grant.secret), null, 'and stays gone');
      now += 120_000;
    });

    test('the absolute lifetime ends a session however active it is', async () => {
      const grant = await a.admin.consoleSessions.create(alice, {
        idleMs: 60_000,
        lifetimeMs: 150_000,
      });
      for (let i = 0; i < 2; i++) {
        now += 50_000;
        assert.ok(await a.admin.consoleSessions.lookup(grant.secret));
      }
      now += 50_000;
      assert.equal(await a.admin.consoleSessions.lookup(grant.secret), null);
    });

    test('logout on one replica ends the session on the other', async () => {
      const grant = await a.admin.consoleSessions.create(alice);
      assert.ok(await b.admin.consoleSessions.lookup(grant.secret));
      await a.admin.consoleSessions.revoke(grant.secret);
      assert.equal(await b.admin.consoleSessions.lookup(grant.secret), null);
    });

    test('a session acts on the account as the store has it now, on every replica; disabling it or changing its roles ends it', async () => {
      await a.admin.operators.create(BOOTSTRAP_OPERATOR, {
        id: 'bea',
        roles: ['approver', 'auditor'],
        teams: ['support-team'],
      });
      const bea: Operator = {
        id: 'bea',
        name: 'bea',
        roles: ['approver', 'auditor'],
        teams: ['support-team'],
        authenticatedBy: 'password+totp',
      };
      // What a session row remembers of roles decides nothing: a forged row is read through.
      const forged = await a.admin.consoleSessions.create({ ...bea, roles: ['admin'], teams: [] });
      assert.deepEqual((await b.admin.consoleSessions.lookup(forged.secret))?.operator, bea);
      // A name change is not authority: the session goes on and shows the new name.
      await b.admin.operators.update(BOOTSTRAP_OPERATOR, 'bea', { name: 'Bea' });
      assert.equal((await a.admin.consoleSessions.lookup(forged.secret))?.operator.name, 'Bea');
      // A role change on one replica ends the session on the other.
      await b.admin.operators.update(BOOTSTRAP_OPERATOR, 'bea', { roles: ['auditor'] });
      assert.equal(await a.admin.consoleSessions.lookup(forged.secret), null);
      const again = await a.admin.consoleSessions.create({ ...bea, roles: ['auditor'] });
      assert.deepEqual((await a.admin.consoleSessions.lookup(again.secret))?.operator.roles, [
        'auditor',
      ]);
      await b.admin.operators.update(BOOTSTRAP_OPERATOR, 'bea', { disabled: true });
      assert.equal(await a.admin.consoleSessions.lookup(again.secret), null, 'disabled');
      // A session of an account that does not exist is nothing.
      const ghost = await a.admin.consoleSessions.create({ ...bea, id: 'nobody' });
      assert.equal(await b.admin.consoleSessions.lookup(ghost.secret), null);
    });

    test('a pending single sign-on login is taken once, and not after its time', async () => {
      const handle = await a.admin.consoleSessions.beginLogin({ state: 's1', nonce: 'n1' }, 60_000);
      assert.deepEqual(await b.admin.consoleSessions.takeLogin(handle), {
        pending: { state: 's1', nonce: 'n1' },
      });
      assert.equal(await a.admin.consoleSessions.takeLogin(handle), null, 'a replayed callback');
      const late = await a.admin.consoleSessions.beginLogin({ state: 's2' }, 60_000);
      now += 61_000;
      assert.equal(await a.admin.consoleSessions.takeLogin(late), null);
    });

    test('the sweep removes what has ended', async () => {
      await a.admin.consoleSessions.create(alice, { lifetimeMs: 1_000 });
      now += 2_000;
      assert.ok((await a.admin.consoleSessions.sweep()) >= 1);
    });
  });
}
