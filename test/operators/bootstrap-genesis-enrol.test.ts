/**
 * The bootstrap footgun (attack round 8, F12): the bootstrap token set up two admins, then enrolled
 * the second one's factor, which ends its right to arm anyone; the second admin is not confirmed
 * and may not enrol the genesis admin's factor either, so the genesis admin was locked out. The
 * bootstrap token is the genesis admin's own secret: it keeps the right to enrol that admin's first
 * factor, and only that. Its neighbours stay refused: replacing the genesis admin's factor, and
 * enrolling any other decider's.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { BOOTSTRAP_OPERATOR, type Operator } from '../../src/api/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { openWorld, type World } from '../support/world.js';

let world: World;

before(async () => {
  world = await openWorld({ options: { masterKey: MasterKey.generate() } });
});

after(async () => {
  await world?.close();
});

test('the bootstrap token still enrols the genesis admin’s first factor after arming another admin, and nothing more', async () => {
  const { admin } = world.tg;
  const boot = BOOTSTRAP_OPERATOR;
  await admin.operators.create(boot, { id: 'alice', roles: ['admin', 'approver'] });
  await admin.operators.create(boot, { id: 'multi', roles: ['admin', 'auditor'] });
  await admin.operators.create(boot, { id: 'bob', roles: ['approver'] });
  // The footgun: the second admin's factor first. The first admin is now set up.
  await admin.secondFactor.enroll(boot, 'multi');
  const multi: Operator = {
    id: 'multi',
    name: 'multi',
    roles: ['admin', 'auditor'],
    teams: [],
    authenticatedBy: 'personal-token',
  };
  // The second admin is not confirmed: it arms nobody.
  await assert.rejects(admin.secondFactor.enroll(multi, 'alice'), { code: 'FORBIDDEN' });
  // The way out: the genesis admin's own first factor, by the token that is that admin's secret.
  const enrolment = await admin.secondFactor.enroll(boot, 'alice');
  assert.ok(enrolment.secret);
  // The neighbours stay refused: replacing it, and another decider's factor.
  await assert.rejects(admin.secondFactor.enroll(boot, 'alice'), {
    code: 'FORBIDDEN',
    message: /once the first admin is set up/,
  });
  await assert.rejects(admin.secondFactor.enroll(boot, 'bob'), {
    code: 'FORBIDDEN',
    message: /once the first admin is set up/,
  });
});
