/**
 * After the set-up the bootstrap token no longer clears a decider's second-factor failures
 * (attack round 12, N3): unlocking an account that holds `approver` or `admin` resets the
 * guessing guard, so a stolen personal token could guess codes and never reach the lockout. Once
 * the set-up latch is closed the token's unlock of such an account is FORBIDDEN, audited
 * `operator.four_eyes_refused` (reason `bootstrap_after_setup`, act `unlock_second_factor`) and
 * clears nothing. Benign neighbours: before the set-up the token unlocks; after it another admin
 * does.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { BOOTSTRAP_ACTOR_ID, BOOTSTRAP_OPERATOR } from '../../src/domain/operators/index.js';
import { asReply, operator } from '../support/operators.js';
import { openWorld, type World } from '../support/world.js';

describe('the bootstrap token unlocks no decider’s second factor after the set-up', () => {
  let w: World;
  const token: Actor = { id: BOOTSTRAP_ACTOR_ID, via: 'cli' };
  const events = async (action: string) =>
    (await w.tg.admin.events.list({ limit: 100_000 })).filter((e) => e.action === action);
  /** A wrong code of `id`'s own factor (an admin replacing it): one failure the guard counts. */
  const fail = async (id: string) => {
    const r = await asReply(() =>
      w.tg.admin.secondFactor.enroll(operator(id, ['admin', 'approver']), id, 'library', {
        totp: '000000',
      }),
    );
    assert.equal(r.status, 400, JSON.stringify(r.body));
  };

  before(async () => {
    w = await openWorld({ options: { masterKey: MasterKey.generate() } });
    // The fresh install, no factor enrolled yet: app (the genesis admin) and gen, admins both.
    for (const id of ['app', 'gen']) {
      await w.tg.admin.operators.create(BOOTSTRAP_OPERATOR, { id, roles: ['admin', 'approver'] });
    }
  });
  after(async () => {
    await w?.close();
  });

  test('benign: before the set-up the token unlocks an admin', async () => {
    const s = await w.tg.admin.secondFactor.unlock('app', token);
    assert.equal(s.failures, 0);
    assert.equal((await events('approver.totp_unlocked')).length, 1);
  });

  test('the attack: after the set-up the token unlocks an admin: 403, audited, nothing cleared', async () => {
    // The genesis admin gets her first factor (the set-up latch closes) and arms gen.
    await w.tg.admin.secondFactor.enroll(BOOTSTRAP_OPERATOR, 'app');
    await w.tg.admin.secondFactor.enroll(operator('app', ['admin', 'approver']), 'gen');
    for (const id of ['app', 'gen']) {
      await fail(id);
      const before = (await w.tg.admin.secondFactor.state(id)).failures;
      assert.ok(before > 0);
      const refused = await asReply(() => w.tg.admin.secondFactor.unlock(id, token));
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.equal((refused.body as { code?: string }).code, 'FORBIDDEN');
      assert.equal((await w.tg.admin.secondFactor.state(id)).failures, before, 'nothing cleared');
      const audited = (await events('operator.four_eyes_refused')).filter(
        (e) => e.subject === `operator:${id}`,
      );
      assert.deepEqual(
        audited.map((e) => {
          const d = JSON.parse(e.details) as Record<string, unknown>;
          return [e.actor, d.act, d.reason];
        }),
        [[BOOTSTRAP_ACTOR_ID, 'unlock_second_factor', 'bootstrap_after_setup']],
      );
    }
    assert.equal((await events('approver.totp_unlocked')).length, 1);
  });

  test('benign: after the set-up another admin unlocks app', async () => {
    const s = await w.tg.admin.secondFactor.unlock('app', { id: 'operator:gen', via: 'cli' });
    assert.equal(s.failures, 0);
    assert.equal((await events('approver.totp_unlocked')).length, 2);
  });
});
