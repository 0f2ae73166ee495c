/**
 * Operators' second factors are data: an admin enrols one for a named operator, the secret is
 * sealed with the master key in the database and read on every check, so a second gateway on the
 * same database (SQLite file or PostgreSQL) sees an enrolment, a re-enrolment and a removal at
 * once. Nobody but an admin (or the bootstrap token) enrols; a sealed row moved to another
 * operator does not open; one code is good for one use.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { OperatorSecondFactors, totpAt } from '../../src/domain/decisions/index.js';
import { BOOTSTRAP_OPERATOR } from '../../src/domain/operators/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { operator } from '../support/operators.js';

const admin = operator('root', ['admin']);

for (const backend of backends()) {
  describe(`operators' second factors in the database (${backend.name})`, () => {
    let nowMs = Date.UTC(2026, 5, 1, 12, 0, 0);
    const clock = () => new Date(nowMs);
    /** Past the backoff of a failure and into a fresh TOTP step. */
    const later = () => {
      nowMs += 60_000;
    };
    let tg: Gateway;
    let replica: Gateway;
    let inspector: Store;
    let drop: () => Promise<void>;

    before(async () => {
      const fresh = await backend.fresh();
      drop = fresh.drop;
      const options = { db: fresh.url, clock, masterKey: MasterKey.generate() };
      tg = await openGateway(options);
      replica = await openGateway(options);
      inspector = await openStore(fresh.url);
      // Second factors belong to operator accounts.
      for (const id of ['alice', 'bob', 'carol', 'erin', 'frank', 'gina'])
        await tg.operators.create(BOOTSTRAP_OPERATOR, { id, roles: ['approver'] });
    });
    after(async () => {
      await replica.close();
      await tg.close();
      await inspector.close();
      await drop();
    });

    const events = async (action: string, subject: string) =>
      inspector.db
        .selectFrom('events')
        .selectAll()
        .where('action', '=', action)
        .where('subject', '=', subject)
        .execute();

    test('an enrolment on one gateway is checked by the other at once; the secret is stored sealed', async () => {
      assert.equal(await replica.secondFactor.enrolled('alice'), false);
      const e = await tg.admin.secondFactor.enroll(admin, 'alice');
      assert.match(e.otpauth_uri, /^otpauth:\/\/totp\/toolgate:alice\?secret=/);
      assert.equal(await replica.secondFactor.enrolled('alice'), true);
      later();
      await replica.secondFactor.verify('alice', totpAt(e.secret, clock()));

      const row = await inspector.db
        .selectFrom('operator_second_factors')
        .selectAll()
        .where('operator_id', '=', 'alice')
        .executeTakeFirstOrThrow();
      assert.ok(!JSON.stringify(row).includes(e.secret), 'no plaintext secret in the row');
      assert.equal(row.enrolled_by, 'operator:root');
      const audited = await events('second_factor.enrolled', 'operator:alice');
      assert.equal(audited.length, 1);
      assert.equal(audited[0]?.actor, 'operator:root');
      assert.ok(!JSON.stringify(audited).includes(e.secret), 'the event holds no secret');
    });

    test('a re-enrolment replaces the secret on every replica and is audited; removal too', async () => {
      const first = await tg.admin.secondFactor.enroll(BOOTSTRAP_OPERATOR, 'bob');
      later();
      await replica.secondFactor.verify('bob', totpAt(first.secret, clock()));
      const second = await tg.admin.secondFactor.enroll(admin, 'bob');
      assert.equal(second.version, 2);
      assert.notEqual(second.secret, first.secret);
      later();
      await assert.rejects(replica.secondFactor.verify('bob', totpAt(first.secret, clock())), {
        code: 'INPUT_INVALID',
      });
      later();
      await replica.secondFactor.verify('bob', totpAt(second.secret, clock()));
      assert.equal((await events('second_factor.replaced', 'operator:bob')).length, 1);

      assert.deepEqual(await tg.admin.secondFactor.remove(admin, 'bob'), {
        operator_id: 'bob',
        removed: true,
      });
      later();
      await assert.rejects(replica.secondFactor.verify('bob', totpAt(second.secret, clock())), {
        code: 'FORBIDDEN',
      });
      assert.equal((await events('second_factor.removed', 'operator:bob')).length, 1);
    });

    test('only an admin or the bootstrap token enrols; nothing is stored for a refused one', async () => {
      for (const by of [
        operator('ann', ['approver']),
        operator('aud', ['auditor']),
        operator('own', ['owner']),
      ]) {
        await assert.rejects(tg.admin.secondFactor.enroll(by, by.id), { code: 'FORBIDDEN' });
        await assert.rejects(tg.admin.secondFactor.enroll(by, 'carol'), { code: 'FORBIDDEN' });
        await assert.rejects(tg.admin.secondFactor.remove(by, 'alice'), { code: 'FORBIDDEN' });
      }
      assert.equal(await tg.secondFactor.enrolled('carol'), false);
      assert.equal(
        await tg.secondFactor.enrolled('alice'),
        true,
        'a refused remove removed nothing',
      );
      // The bootstrap token is nobody, so it has no second factor of its own; ids are checked.
      for (const id of ['admin-token', 'has space', '', 'x'.repeat(101)]) {
        await assert.rejects(tg.admin.secondFactor.enroll(admin, id), { code: 'INPUT_INVALID' });
      }
    });

    test('enrolment for an id that is not an operator account is refused when accounts are known', async () => {
      const factors = new OperatorSecondFactors(
        // The store of the first gateway, through a second connection.
        inspector.db,
        MasterKey.generate(),
        { clock, operatorExists: async (id) => id === 'dora' },
      );
      await assert.rejects(factors.enroll(admin, 'nobody'), { code: 'NOT_FOUND' });
      // The gateway's own wiring asks its operator accounts.
      await assert.rejects(tg.admin.secondFactor.enroll(admin, 'nobody'), { code: 'NOT_FOUND' });
      assert.equal(await factors.enrolled('nobody'), false);
      assert.equal((await factors.enroll(admin, 'dora')).version, 1);
    });

    test('a sealed row copied onto another operator does not open', async () => {
      const e = await tg.admin.secondFactor.enroll(admin, 'erin');
      await tg.admin.secondFactor.enroll(admin, 'frank');
      const sealed = await inspector.db
        .selectFrom('operator_second_factors')
        .select(['version', 'key_id', 'nonce', 'ciphertext', 'tag'])
        .where('operator_id', '=', 'erin')
        .executeTakeFirstOrThrow();
      await inspector.db
        .updateTable('operator_second_factors')
        .set(sealed)
        .where('operator_id', '=', 'frank')
        .execute();
      later();
      await assert.rejects(tg.secondFactor.verify('frank', totpAt(e.secret, clock())), {
        code: 'SECRET_UNREADABLE',
        message: /second factor of operator frank failed authentication/,
      });
      assert.equal((await tg.secondFactor.state('frank')).failures, 0, 'no attempt was taken');
    });

    test('one code, one use: a code accepted on one gateway is refused on the other', async () => {
      const e = await tg.admin.secondFactor.enroll(admin, 'gina');
      later();
      const code = totpAt(e.secret, clock());
      await tg.secondFactor.verify('gina', code);
      nowMs += 2000; // past the backoff, inside the code's window
      await assert.rejects(replica.secondFactor.verify('gina', code), {
        code: 'INPUT_INVALID',
        message: /replayed/,
      });
    });
  });
}
