/**
 * A second factor removed by another account unconfirms it (attack round 11, F2), over REST:
 * alice's personal token alone created a helper admin, the helper removed alice's factor, alice
 * enrolled a "first" factor without a code and stayed confirmed, so her vote still counted as a
 * second person's. Now the removal clears her confirmation in its own transaction and its
 * `second_factor.removed` record says so; she hands nobody anything until another confirmed
 * decider confirms her again. The benign neighbours: removing her own factor with its current
 * code and enrolling her first again changes nothing about her confirmation; another confirmed
 * decider confirms her again after the removal.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { totpAt } from '../../src/domain/decisions/index.js';
import { accountSteps } from '../support/accounts.js';
import { lastSeq } from '../support/events.js';
import { openWorld, type Reply, type World } from '../support/world.js';

describe('a second factor removed by another account unconfirms it (attack round 11, F2)', () => {
  let w: World;
  let now = new Date('2026-05-04T10:00:00Z');
  const tokens: Record<string, string> = {};
  const secrets: Record<string, string> = {};
  const ok = (r: Reply, status: number) => assert.equal(r.status, status, JSON.stringify(r.body));
  const call = (by: string, method: string, path: string, body?: unknown) =>
    w.send(method, path, body, by === 'bootstrap' ? undefined : (tokens[by] ?? ''));
  /** A fresh code of `id`'s factor: each call moves the clock one TOTP step on. */
  const code = (id: string) => {
    now = new Date(now.getTime() + 30_000);
    return totpAt(secrets[id] ?? '', now);
  };
  const { setUp, enrolOwn } = accountSteps(call, tokens, secrets);
  const confirmed = async (id: string) => (await w.tg.admin.operators.get(id)).confirmed_by;

  before(async () => {
    w = await openWorld({
      rest: true,
      options: { masterKey: MasterKey.generate(), clock: () => now },
    });
    // The genesis: the bootstrap token sets up alice, who brings in dana and confirms her.
    await setUp('bootstrap', 'alice', ['admin', 'approver'], true);
    await setUp('alice', 'dana', ['approver'], true);
    ok(await call('alice', 'POST', '/v1/operators/dana/confirm', { totp: code('alice') }), 200);
  });
  after(async () => {
    await w?.close();
  });

  test('benign: she removes her own factor with its code and enrols her first again; still confirmed', async () => {
    ok(
      await call('alice', 'DELETE', '/v1/operators/alice/second-factor', { totp: code('alice') }),
      200,
    );
    await enrolOwn('alice');
    assert.equal(await confirmed('alice'), 'admin-token');
  });

  test('the attack: her token alone swaps her factor through a helper admin; the removal unconfirms her', async () => {
    await setUp('alice', 'h1', ['admin'], false);
    const seq = await lastSeq(w.tg.admin);
    ok(await call('h1', 'DELETE', '/v1/operators/alice/second-factor'), 200);
    assert.equal(await confirmed('alice'), null);
    const removed = (await w.tg.admin.events.list({ afterSeq: seq, limit: 100 })).filter(
      (e) => e.action === 'second_factor.removed',
    );
    assert.deepEqual(
      removed.map((e) => [e.actor, e.subject, JSON.parse(e.details)]),
      [
        [
          'operator:h1',
          'operator:alice',
          { confirmation_cleared: true, was_confirmed_by: 'admin-token' },
        ],
      ],
    );
    await enrolOwn('alice');
    assert.equal(await confirmed('alice'), null);
    // Unconfirmed, she hands nobody a deciding role.
    const r = await call('alice', 'POST', '/v1/operators', { id: 'xavier', roles: ['approver'] });
    ok(r, 403);
    assert.match(String(r.body.message), /not confirmed/);
  });

  test('benign: another confirmed decider confirms her again', async () => {
    ok(await call('dana', 'POST', '/v1/operators/alice/confirm', { totp: code('dana') }), 200);
    assert.equal(await confirmed('alice'), 'operator:dana');
    ok(await call('alice', 'POST', '/v1/operators', { id: 'xavier', roles: ['approver'] }), 201);
  });
});
