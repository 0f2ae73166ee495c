/**
 * The set-up latch closes at the first act of a person's own credential (attack round 11, F1), over
 * REST: on an install whose admins hold no local second factor (single sign-on admins, or admins
 * who work with personal tokens only) the bootstrap token's fresh-install powers end at the first
 * operator sign-in (local or single sign-on) or the first request a personal token authenticates,
 * audited `bootstrap_after_setup`. And the token never issues a personal token for, nor enrols or
 * replaces the second factor of, a single sign-on account, latch or no latch: audited
 * `bootstrap_on_sso`. The benign neighbours: before anyone acted, the token sets up a local first
 * admin (account, token, first factor); a single sign-on admin issues their own token.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { BOOTSTRAP_OPERATOR } from '../../src/api/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { totpAt } from '../../src/domain/decisions/index.js';
import { eventsSince, lastSeq } from '../support/events.js';
import { openWorld, type Reply, type World } from '../support/world.js';

const SSO = { issuer: 'https://idp.example', name: 'SSO Admin', teams: [] } as const;

describe('the set-up latch closes at the first act of a person (attack round 11, F1)', () => {
  const worlds: World[] = [];
  let now = new Date('2026-05-04T10:00:00Z');
  const open = async () => {
    const w = await openWorld({
      rest: true,
      options: { masterKey: MasterKey.generate(), clock: () => now },
      inspector: true,
    });
    worlds.push(w);
    return w;
  };
  after(async () => {
    for (const w of worlds) await w.close();
  });
  const ok = (r: Reply, status: number) => assert.equal(r.status, status, JSON.stringify(r.body));
  const refusals = async (w: World, seq: number) =>
    (await eventsSince(w.tg.admin, seq)).map((e) => [
      e.action,
      e.actor,
      e.subject,
      e.details.reason,
    ]);
  /** The bootstrap token's act, refused 403 naming `message`, one record with `reason`. */
  const refused = async (
    w: World,
    method: string,
    path: string,
    body: unknown,
    subject: string,
    reason: string,
    message: RegExp,
  ) => {
    const seq = await lastSeq(w.tg.admin);
    const r = await w.send(method, path, body);
    ok(r, 403);
    assert.match(String(r.body.message), message);
    assert.deepEqual(await refusals(w, seq), [
      ['operator.four_eyes_refused', 'admin-token', subject, reason],
    ]);
  };
  const AFTER_SETUP = /once the first admin is set up/;
  const ON_SSO = /single sign-on account/;
  /** The bootstrap token's POST, refused once a person acted (`bootstrap_after_setup`). */
  const afterSetup = (w: World, path: string, body: unknown, subject: string) =>
    refused(w, 'POST', path, body, subject, 'bootstrap_after_setup', AFTER_SETUP);
  /** The bootstrap token issuing a token for, and enrolling the factor of, SSO account `id`: refused. */
  const onSso = async (w: World, id: string) => {
    const sub = `operator:${id}`;
    const body = { name: 'x', expires_in_days: 1 };
    await refused(w, 'POST', `/v1/operators/${id}/tokens`, body, sub, 'bootstrap_on_sso', ON_SSO);
    await refused(
      w,
      'POST',
      `/v1/operators/${id}/second-factor`,
      {},
      sub,
      'bootstrap_on_sso',
      ON_SSO,
    );
  };

  test('the attack: single sign-on admins only — after their first sign-in the token arms nobody, and never takes over the SSO admin', async () => {
    const w = await open();
    const admin = await w.tg.admin.operators.fromOidc({
      ...SSO,
      subject: 'sub-1',
      roles: ['admin'],
    });
    await afterSetup(w, '/v1/operators', { id: 'bt1', roles: ['approver'] }, 'operator:bt1');
    await onSso(w, admin.id);
    // An install from before this latch (upgraded, nobody signed in since): the SSO account is
    // refused all the same.
    await w.inspector?.db.deleteFrom('meta').where('key', '=', 'first_admin_set_up').execute();
    await onSso(w, admin.id);
    const view = await w.tg.admin.operators.get(admin.id);
    assert.equal(view.set_up_by, null);
    assert.equal((await w.tg.admin.operators.tokens(admin.id)).length, 0);
  });

  test('benign: the single sign-on admin issues their own token and works with it', async () => {
    const w = await open();
    const admin = await w.tg.admin.operators.fromOidc({
      ...SSO,
      subject: 'sub-2',
      roles: ['admin'],
    });
    const issued = await w.tg.admin.operators.issueToken(admin, {
      name: 'laptop',
      expiresInDays: 1,
    });
    const me = await w.send('GET', '/v1/operators/me', undefined, issued.token);
    ok(me, 200);
    assert.equal(me.body.id, admin.id);
  });

  test('the attack: a token-only admin — after her token’s first request the token arms nobody, nor takes over her or her approver', async () => {
    const w = await open();
    ok(await w.send('POST', '/v1/operators', { id: 'alice', roles: ['admin'] }), 201);
    const issued = await w.send('POST', '/v1/operators/alice/tokens', {
      name: 'l',
      expires_in_days: 9,
    });
    ok(issued, 201);
    const alice = String(issued.body.token);
    ok(await w.send('POST', '/v1/operators', { id: 'bob', roles: ['approver'] }, alice), 201);
    ok(await w.send('POST', '/v1/operators/bob/second-factor', {}, alice), 201);
    await afterSetup(w, '/v1/operators', { id: 'mal', roles: ['approver'] }, 'operator:mal');
    await afterSetup(
      w,
      '/v1/operators/alice/tokens',
      { name: 'x', expires_in_days: 1 },
      'operator:alice',
    );
    await afterSetup(w, '/v1/operators/bob/second-factor', {}, 'operator:bob');
  });

  test('the attack: an approver’s first local sign-in ends the token’s powers (no admin holds a factor)', async () => {
    const w = await open();
    const password = 'a long and proper passphrase 1';
    ok(await w.send('POST', '/v1/operators', { id: 'appr', roles: ['approver'], password }), 201);
    const enrolled = await w.send('POST', '/v1/operators/appr/second-factor', {});
    ok(enrolled, 201);
    now = new Date(now.getTime() + 60_000);
    await w.tg.admin.operators.loginLocal(
      'appr',
      password,
      totpAt(String(enrolled.body.secret), now),
    );
    await afterSetup(w, '/v1/operators', { id: 'mal', roles: ['approver'] }, 'operator:mal');
  });

  test('benign: before anyone acted, the token sets up the local first admin: account, token, first factor', async () => {
    const w = await open();
    ok(await w.send('POST', '/v1/operators', { id: 'alice', roles: ['admin', 'approver'] }), 201);
    ok(await w.send('POST', '/v1/operators', { id: 'bob', roles: ['approver'] }), 201);
    ok(await w.send('POST', '/v1/operators/alice/tokens', { name: 'l', expires_in_days: 9 }), 201);
    ok(await w.send('POST', '/v1/operators/alice/second-factor', {}), 201);
    const view = await w.tg.admin.operators.get('alice');
    assert.equal(view.confirmed_by, 'admin-token');
    // The library's bootstrap operator is the same token: refused like the REST one now.
    await assert.rejects(
      w.tg.admin.operators.create(BOOTSTRAP_OPERATOR, { id: 'late', roles: ['approver'] }),
      { code: 'FORBIDDEN', message: AFTER_SETUP },
    );
  });
});
