/**
 * Once set up, always set up (attack round 10, F3), over REST on every backend: the bootstrap
 * token's fresh-install powers end when the first admin is set up and never come back, whatever
 * later happens to the accounts: another admin removing the first admin's second factor, the
 * first admin removing it herself, or disabling every admin that holds one, leaves the token
 * refused (audited `bootstrap_after_setup`). And one's own second factor is replaced or removed
 * only with a current code of it (round 10, F1): an admin's token alone is refused and audited,
 * a wrong code is a counted failure. The benign neighbours: the bootstrap token sets up the first
 * admin on a fresh install; another admin re-enrols her factor (a hand-over); she replaces or
 * removes her own with her current code; with none enrolled she enrols her first herself.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Operator } from '../../src/api/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { totpAt } from '../../src/domain/decisions/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { accountSteps } from '../support/accounts.js';
import { backends } from '../support/backends.js';
import { eventsSince, lastSeq } from '../support/events.js';
import { restClient } from '../support/world.js';

const ADMIN_TOKEN = 'admin-token-for-the-setup-latch-0123456789abcdef';

for (const backend of backends()) {
  describe(`the first admin's set-up is a one-way latch; one's own factor needs its code (${backend.name})`, () => {
    let tg: Gateway;
    let app: FastifyInstance | undefined;
    let drop: (() => Promise<void>) | undefined;
    let base = '';
    let now = new Date('2026-05-04T10:00:00Z');
    const tokens: Record<string, string> = { bootstrap: ADMIN_TOKEN };
    const secrets: Record<string, string> = {};
    const rest = restClient(() => base);
    const call = (by: string, method: string, path: string, body?: unknown) =>
      rest(method, path, body, tokens[by] ?? '');
    /** A fresh code of `id`'s factor: each call moves the clock one TOTP step on. */
    const code = (id: string) => {
      now = new Date(now.getTime() + 30_000);
      return totpAt(secrets[id] ?? '', now);
    };
    const mark = () => lastSeq(tg.admin);
    const since = (seq: number) => eventsSince(tg.admin, seq);
    const ok = (r: { status: number; body: unknown }, status: number) =>
      assert.equal(r.status, status, JSON.stringify(r.body));
    const { setUp, enrolOwn } = accountSteps(call, tokens, secrets);
    /** alice, admin and approver, as the REST auth hook sets her after `authenticatedBy`. */
    const aliceBy = (authenticatedBy: Operator['authenticatedBy']): Operator => ({
      id: 'alice',
      name: 'alice',
      roles: ['admin', 'approver'],
      teams: [],
      authenticatedBy,
    });
    /** alice's wrong code for her own factor: 400, one counted failure; then her lock is lifted. */
    const wrongCodeCounted = async () => {
      const seq = await mark();
      ok(
        await call('alice', 'DELETE', '/v1/operators/alice/second-factor', { totp: '000000' }),
        400,
      );
      assert.deepEqual(
        (await since(seq)).map((e) => e.action),
        ['approver.totp_failed'],
      );
      await tg.admin.secondFactor.unlock('alice', { id: 'cli:test', via: 'cli' });
    };
    /** alice's `totp` in a body refused by its schema (`label`), with nothing written. */
    const schemaRefused = async (method: string, path: string, totp: unknown, label: string) => {
      const seq = await mark();
      const r = await call('alice', method, path, { totp });
      ok(r, 400);
      assert.equal(r.body.code, 'INPUT_INVALID', label);
      assert.deepEqual(await since(seq), [], 'no four-eyes refusal, no counted failure');
    };
    /** The bootstrap token's genesis powers, each refused and audited `bootstrap_after_setup`. */
    const bootstrapRefused = async (label: string) => {
      const tries: [string, string, unknown][] = [
        ['POST', '/v1/operators', { id: `bt-${label}`, roles: ['approver'] }],
        ['POST', '/v1/operators/alice/second-factor', {}],
        ['POST', '/v1/operators/alice/tokens', { name: 'x', expires_in_days: 1 }],
      ];
      for (const [method, path, body] of tries) {
        const seq = await mark();
        const r = await call('bootstrap', method, path, body);
        ok(r, 403);
        assert.match(String(r.body.message), /once the first admin is set up/);
        const written = await since(seq);
        assert.deepEqual(
          written.map((e) => [e.action, e.actor, e.details.reason]),
          [['operator.four_eyes_refused', 'admin-token', 'bootstrap_after_setup']],
        );
      }
      const list = (await call('bootstrap', 'GET', '/v1/operators')).body;
      assert.doesNotMatch(JSON.stringify(list), new RegExp(`bt-${label}`));
    };

    before(async () => {
      const fresh = await backend.fresh();
      drop = fresh.drop;
      tg = await openGateway({ db: fresh.url, clock: () => now, masterKey: MasterKey.generate() });
      app = await buildServer(tg, { adminToken: ADMIN_TOKEN });
      base = await app.listen({ host: '127.0.0.1', port: 0 });
    });
    after(async () => {
      await app?.close();
      await tg?.close();
      await drop?.();
    });

    test('fresh install: the bootstrap token sets up the first admin; then its powers end', async () => {
      await setUp('bootstrap', 'alice', ['admin', 'approver'], true);
      await bootstrapRefused('early');
    });

    test('the attack (F1): an admin’s token alone replaces or removes her own factor — refused and audited; a wrong code counts', async () => {
      for (const [method, act] of [
        ['POST', 'enrol_second_factor'],
        ['DELETE', 'remove_second_factor'],
      ] as const) {
        const seq = await mark();
        const r = await call('alice', method, '/v1/operators/alice/second-factor', {});
        ok(r, 403);
        assert.match(String(r.body.message), /current code/);
        assert.deepEqual(
          (await since(seq)).map((e) => [
            e.action,
            e.actor,
            e.subject,
            e.details.act,
            e.details.reason,
          ]),
          [
            [
              'operator.four_eyes_refused',
              'operator:alice',
              'operator:alice',
              act,
              'own_second_factor',
            ],
          ],
        );
      }
      const seq = await mark();
      const wrong = await call('alice', 'POST', '/v1/operators/alice/second-factor', {
        totp: '000000',
      });
      ok(wrong, 400);
      assert.ok((await since(seq)).some((e) => e.action === 'approver.totp_failed'));
      // Her old factor still works: nothing was replaced.
      const state = await call('alice', 'GET', '/v1/operators/alice/second-factor');
      assert.equal(state.body.enrolled, true);
      assert.equal(state.body.failures, 1);
      await tg.admin.secondFactor.unlock('alice', { id: 'cli:test', via: 'cli' });
    });

    test('a totp that is not a string of digits is a schema error on the own-factor routes (attack round 11, F9)', async () => {
      for (const method of ['POST', 'DELETE'] as const) {
        for (const totp of [123456, '12ab56', ['123456'], null]) {
          const path = '/v1/operators/alice/second-factor';
          await schemaRefused(method, path, totp, `${method} ${JSON.stringify(totp)}`);
        }
      }
      // Its neighbours: no code is the audited four-eyes refusal (above); a string of digits is
      // checked and a wrong one counted.
      await wrongCodeCounted();
      // The other bodies that carry a totp refuse a number by their schema too.
      for (const path of ['/v1/changes/chg_x/approve', '/v1/approvals/apr_x/approve']) {
        const r = await call('alice', 'POST', path, { totp: 123456 });
        ok(r, 400);
        assert.equal(r.body.code, 'INPUT_INVALID', path);
      }
    });

    test('a totp of other than six digits is a schema error in every body, and in the library (attack round 12, N5)', async () => {
      for (const totp of ['1234567', '12345', '']) {
        for (const [method, path] of [
          ['POST', '/v1/operators/alice/second-factor'],
          ['DELETE', '/v1/operators/alice/second-factor'],
          ['POST', '/v1/operators/alice/confirm'],
          ['POST', '/v1/changes/chg_x/approve'],
          ['POST', '/v1/approvals/apr_x/approve'],
          ['POST', '/v1/tools/t/versions/1.0.0/review'],
        ] as const) {
          await schemaRefused(method, path, totp, `${method} ${path} ${JSON.stringify(totp)}`);
        }
        const alice = aliceBy('password+totp');
        const seq = await mark();
        await assert.rejects(
          tg.admin.secondFactor.enroll(alice, 'alice', 'library', { totp }),
          (err: { code?: string }) => err.code === 'INPUT_INVALID',
        );
        assert.deepEqual(await since(seq), [], 'the library: no four-eyes refusal either');
      }
      // Its neighbour: six digits are checked (a wrong one counted; a current one, below, replaces).
      await wrongCodeCounted();
    });

    test('benign (F1): with her current code she replaces her own factor, and stays confirmed', async () => {
      const r = await call('alice', 'POST', '/v1/operators/alice/second-factor', {
        totp: code('alice'),
      });
      ok(r, 201);
      assert.notEqual(r.body.secret, secrets.alice);
      secrets.alice = String(r.body.secret);
      const me = await call('alice', 'GET', '/v1/operators/alice');
      assert.equal(me.body.confirmed, true);
    });

    test('the attack (F3): an unconfirmed admin removes the first admin’s factor; the bootstrap token stays refused', async () => {
      // adm2: an admin alice created and gave a token, not confirmed; the genesis is still open.
      await setUp('alice', 'adm2', ['admin'], false);
      // dana: a second confirmed admin, who confirms alice again once adm2's removal unconfirmed
      // her (attack round 11, F2).
      await setUp('alice', 'dana', ['admin'], true);
      ok(await call('alice', 'POST', '/v1/operators/dana/confirm', { totp: code('alice') }), 200);
      ok(await call('adm2', 'DELETE', '/v1/operators/alice/second-factor'), 200);
      await bootstrapRefused('removed');
    });

    test('benign (F3): with none enrolled she enrols her first herself; another confirmed admin re-enrols it (a hand-over)', async () => {
      await enrolOwn('alice');
      ok(await call('dana', 'POST', '/v1/operators/alice/confirm', { totp: code('dana') }), 200);
      const handOver = await call('dana', 'POST', '/v1/operators/alice/second-factor', {});
      ok(handOver, 201);
      secrets.alice = String(handOver.body.secret);
      const view = await call('alice', 'GET', '/v1/operators/alice');
      assert.equal(view.body.set_up_by, 'operator:dana');
    });

    test('the attack (F3): the first admin removes her own factor (with her code); the bootstrap token stays refused', async () => {
      ok(
        await call('alice', 'DELETE', '/v1/operators/alice/second-factor', { totp: code('alice') }),
        200,
      );
      ok(await call('adm2', 'DELETE', '/v1/operators/dana/second-factor'), 200);
      await bootstrapRefused('self-removed');
    });

    test('the attack (F3): the only admin with a factor disabled; the bootstrap token stays refused', async () => {
      await enrolOwn('alice');
      ok(await call('adm2', 'POST', '/v1/operators/alice/disable'), 200);
      await bootstrapRefused('disabled');
    });

    test('recovery is by a person, never by the token: the host acts in-process as the admin account (library), audited as her', async () => {
      const alice = aliceBy('personal-token');
      const seq = await mark();
      await tg.admin.operators.update(alice, 'alice', { disabled: false }, 'library');
      assert.deepEqual(
        (await since(seq)).map((e) => [e.action, e.actor, e.subject]),
        [['operator.updated', 'operator:alice', 'operator:alice']],
      );
      ok(await call('alice', 'GET', '/v1/operators/me'), 200);
      await bootstrapRefused('recovered');
    });
  });
}
