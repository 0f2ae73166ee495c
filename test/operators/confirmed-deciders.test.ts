/**
 * Four eyes are two people, not two accounts one person set up, over REST on every backend: an
 * account counts in a two-approver change only while it is confirmed. One admin who creates two
 * approvers, enrols their second factors and issues their tokens gets two accounts that count for
 * nothing (the change stays pending); the bootstrap token confirms nobody; no account confirms
 * itself; who set an account up cannot confirm it once two confirmed deciders exist; a second
 * factor replaced, a token issued or a password set by an admin unconfirms the account again. The
 * benign neighbour: the genesis admin brings in a second admin and confirms it; that admin
 * confirms the approvers the first one set up; two confirmed approvers apply the change.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Actor } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { totpAt } from '../../src/domain/decisions/index.js';
import { buildServer } from '../../src/edge/rest/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { type Backend, backends } from '../support/backends.js';
import { approvePendingReviews } from '../support/reviews.js';
import { validTool } from '../support/tools.js';
import { restClient } from '../support/world.js';

const ADMIN_TOKEN = 'admin-token-for-confirmed-deciders-0123456789abcdef';
const setup: Actor = { id: 'cli:setup', via: 'cli' };

type Reply = { status: number; body: Record<string, unknown> };

/**
 * A gateway on a fresh database of `backend`, served over REST on a kernel port, with the helpers
 * each suite below drives it by: accounts set up, shown and confirmed, and changes that need two
 * approvers. Registers its own `before`/`after` in the calling `describe`.
 */
function restWorld(backend: Backend) {
  const w = {
    tg: undefined as unknown as Gateway,
    base: '',
    now: new Date('2026-05-04T10:00:00Z'),
    tokens: {} as Record<string, string>,
    secrets: {} as Record<string, string>,
  };
  let app: FastifyInstance | undefined;
  let drop: (() => Promise<void>) | undefined;
  /** A fresh code of `id`: each call moves the clock one TOTP step on (a code is good once). */
  const code = (id: string) => {
    w.now = new Date(w.now.getTime() + 30_000);
    return totpAt(w.secrets[id] ?? '', w.now);
  };
  const rest = restClient(() => w.base);
  const call = (method: string, path: string, bearer: string, body?: unknown) =>
    rest(method, path, body, bearer);
  const as = (id: string) => (id === 'bootstrap' ? ADMIN_TOKEN : (w.tokens[id] ?? ''));
  /** Creates `id` as `by`, enrols its second factor and issues its token, all as `by`. */
  const setUp = async (by: string, id: string, roles: string[]) => {
    const bearer = as(by);
    const created = await call('POST', '/v1/operators', bearer, { id, roles });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const issued = await call('POST', `/v1/operators/${id}/tokens`, bearer, {
      name: 'laptop',
      expires_in_days: 30,
    });
    assert.equal(issued.status, 201, JSON.stringify(issued.body));
    w.tokens[id] = String(issued.body.token);
    const enrolled = await call('POST', `/v1/operators/${id}/second-factor`, bearer);
    assert.equal(enrolled.status, 201, JSON.stringify(enrolled.body));
    w.secrets[id] = String(enrolled.body.secret);
  };
  const show = async (id: string) => (await call('GET', `/v1/operators/${id}`, ADMIN_TOKEN)).body;
  const confirm = (by: string, id: string) =>
    call('POST', `/v1/operators/${id}/confirm`, as(by), { totp: code(by) });
  const approve = (by: string, change: string) =>
    call('POST', `/v1/changes/${change}/approve`, as(by), { totp: code(by) });
  /**
   * Registers an irreversible tool: its activation is a change that needs two approvers. Applied
   * by the library's setup actor, or over REST (`POST /v1/apply`) as `by` when given.
   */
  let tools = 0;
  const twoPersonChange = async (by?: string): Promise<string> => {
    tools += 1;
    const id = `wipe_${tools}`;
    const tool = {
      kind: 'Tool',
      spec: validTool({
        id,
        name: id,
        action_class: 'irreversible',
        access_tier: 'privileged',
        required_capabilities: ['disk:wipe'],
      }),
    };
    if (by === undefined) await w.tg.config.apply([tool], setup);
    else {
      const applied = await call('POST', '/v1/apply', as(by), [tool]);
      assert.equal(applied.status, 200, JSON.stringify(applied.body));
    }
    await approvePendingReviews(w.tg);
    const change = (await w.tg.changes.list('pending')).find((c) => c.subject.includes(id));
    assert.ok(change);
    assert.equal(change.required, 2);
    return change.id;
  };
  const events = async (action: string) =>
    (await w.tg.admin.events.list({ limit: 1000 })).filter((e) => e.action === action);

  before(async () => {
    const fresh = await backend.fresh();
    drop = fresh.drop;
    w.tg = await openGateway({
      db: fresh.url,
      clock: () => w.now,
      masterKey: MasterKey.generate(),
    });
    app = await buildServer(w.tg, { adminToken: ADMIN_TOKEN });
    w.base = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await app?.close();
    await w.tg?.close();
    await drop?.();
  });
  return { w, code, call, as, setUp, show, confirm, approve, twoPersonChange, events };
}

for (const backend of backends()) {
  describe(`four eyes count confirmed people (${backend.name})`, () => {
    const { w, code, call, as, setUp, show, confirm, approve, twoPersonChange, events } =
      restWorld(backend);
    const secrets = w.secrets;

    test('genesis: the first admin set up through the bootstrap token is confirmed; the bootstrap token confirms nobody', async () => {
      await setUp('bootstrap', 'alice', ['admin']);
      const alice = await show('alice');
      assert.equal(alice.confirmed, true, JSON.stringify(alice));
      assert.equal(alice.confirmed_by, 'admin-token');
      assert.equal(alice.set_up_by, 'admin-token');
      const refused = await call('POST', '/v1/operators/alice/confirm', ADMIN_TOKEN, {
        totp: '123456',
      });
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.equal(refused.body.code, 'FORBIDDEN');
      assert.match(String(refused.body.message), /bootstrap admin token confirms nobody/);
    });

    test('the attack: one admin sets up two approvers; they count for nothing and the change stays pending', async () => {
      await setUp('alice', 'mallory1', ['approver']);
      await setUp('alice', 'mallory2', ['approver']);
      for (const id of ['mallory1', 'mallory2']) {
        const view = await show(id);
        assert.equal(view.confirmed, false);
        assert.equal(view.set_up_by, 'operator:alice');
      }
      const change = await twoPersonChange();
      for (const id of ['mallory1', 'mallory2']) {
        const r = await approve(id, change);
        assert.equal(r.status, 403, JSON.stringify(r.body));
        assert.equal(r.body.code, 'FORBIDDEN');
        assert.match(String(r.body.message), new RegExp(`operator ${id} is not confirmed`));
      }
      const pending = await w.tg.changes.get(change);
      assert.equal(pending.status, 'pending');
      assert.deepEqual(pending.approvers, []);
      assert.equal((await events('change.approval_refused')).length, 2);
      // No account confirms itself; an unconfirmed one confirms nobody.
      const self = await confirm('mallory1', 'mallory1');
      assert.equal(self.status, 403, JSON.stringify(self.body));
      assert.match(String(self.body.message), /cannot confirm their own account/);
      const peer = await confirm('mallory1', 'mallory2');
      assert.equal(peer.status, 403, JSON.stringify(peer.body));
      assert.match(String(peer.body.message), /is not confirmed itself/);
      assert.equal((await show('mallory2')).confirmed, false);
      assert.ok((await events('operator.confirm_refused')).length >= 2);
    });

    test('the genesis admin brings in a second admin and confirms it; from then on it confirms nobody it set up', async () => {
      await setUp('alice', 'bob', ['admin']);
      assert.equal((await show('bob')).confirmed, false);
      const confirmed = await confirm('alice', 'bob');
      assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
      assert.equal(confirmed.body.confirmed, true);
      assert.equal(confirmed.body.confirmed_by, 'operator:alice');
      const [event] = await events('operator.confirmed').then((e) =>
        e.filter((x) => x.subject === 'operator:bob'),
      );
      assert.ok(event);
      assert.equal(event.actor, 'operator:alice');
      // Two confirmed deciders exist: alice set mallory1 up and cannot confirm it.
      const refused = await confirm('alice', 'mallory1');
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.match(String(refused.body.message), /set up mallory1 .* cannot confirm it/);
    });

    test('the benign neighbour: the second person confirms the approvers the first set up, and two confirmed approvers apply the change', async () => {
      for (const id of ['mallory1', 'mallory2']) {
        const r = await confirm('bob', id);
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(r.body.confirmed_by, 'operator:bob');
      }
      const listed = await call('GET', '/v1/operators', as('alice'));
      const rows = listed.body.operators as { id: string; confirmed: boolean }[];
      assert.deepEqual(
        rows.filter((o) => o.confirmed).map((o) => o.id),
        ['alice', 'bob', 'mallory1', 'mallory2'],
      );
      const change = (await w.tg.changes.list('pending'))[0]?.id ?? '';
      assert.equal((await approve('mallory1', change)).body.status, 'pending');
      const applied = await approve('mallory2', change);
      assert.equal(applied.status, 200, JSON.stringify(applied.body));
      assert.equal(applied.body.status, 'applied');
    });

    test('a second factor replaced, a token issued or a password set by an admin unconfirms the account; its own acts do not', async () => {
      const rearmed = await call('POST', '/v1/operators/mallory1/second-factor', as('alice'));
      assert.equal(rearmed.status, 201, JSON.stringify(rearmed.body));
      secrets.mallory1 = String(rearmed.body.secret);
      const view = await show('mallory1');
      assert.equal(view.confirmed, false);
      assert.equal(view.confirmed_by, null);
      assert.equal(view.set_up_by, 'operator:alice');
      assert.ok(
        (await events('operator.unconfirmed')).some((e) => e.subject === 'operator:mallory1'),
      );
      const change = await twoPersonChange();
      const refused = await approve('mallory1', change);
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.match(String(refused.body.message), /operator mallory1 is not confirmed/);
      assert.deepEqual((await w.tg.changes.get(change)).approvers, []);
      // A token issued or a password set by someone else: the same.
      const token = await call('POST', '/v1/operators/mallory2/tokens', as('alice'), {
        name: 'spare',
        expires_in_days: 1,
      });
      assert.equal(token.status, 201, JSON.stringify(token.body));
      assert.equal((await show('mallory2')).confirmed, false);
      assert.equal((await confirm('bob', 'mallory2')).status, 200);
      const password = await call('PUT', '/v1/operators/mallory2/password', as('alice'), {
        password: 'a-long-passphrase-for-confirmation-5821',
      });
      assert.equal(password.status, 204, JSON.stringify(password.body));
      assert.equal((await show('mallory2')).confirmed, false);
      // The account's own act leaves it confirmed: alice replaces her own second factor (proving
      // a current code of it, attack round 10, F1).
      const own = await call('POST', '/v1/operators/alice/second-factor', as('alice'), {
        totp: code('alice'),
      });
      assert.equal(own.status, 201, JSON.stringify(own.body));
      secrets.alice = String(own.body.secret);
      assert.equal((await show('alice')).confirmed, true);
      // Confirmed again by the second person, both count.
      assert.equal((await confirm('bob', 'mallory1')).status, 200);
      assert.equal((await confirm('bob', 'mallory2')).status, 200);
      assert.equal((await approve('mallory1', change)).body.status, 'pending');
      assert.equal((await approve('mallory2', change)).body.status, 'applied');
    });

    test('the genesis never reopens: with the second person demoted, the first still confirms nobody it set up', async () => {
      await setUp('alice', 'mallory3', ['approver']);
      // alice takes the approvers over again and demotes bob: she is the only confirmed decider.
      for (const id of ['mallory1', 'mallory2']) {
        const rearmed = await call('POST', `/v1/operators/${id}/second-factor`, as('alice'));
        assert.equal(rearmed.status, 201, JSON.stringify(rearmed.body));
        assert.equal((await show(id)).confirmed, false);
      }
      const demoted = await call('PATCH', '/v1/operators/bob', as('alice'), {
        roles: ['auditor'],
      });
      assert.equal(demoted.status, 200, JSON.stringify(demoted.body));
      const refused = await confirm('alice', 'mallory3');
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.match(String(refused.body.message), /set up mallory3 .* cannot confirm it/);
      // Granting admin back hands bob deciding power again: he is unconfirmed, and alice, who
      // granted it, cannot confirm him.
      const restored = await call('PATCH', '/v1/operators/bob', as('alice'), { roles: ['admin'] });
      assert.equal(restored.status, 200, JSON.stringify(restored.body));
      assert.equal((await show('bob')).confirmed, false);
      assert.equal((await confirm('alice', 'bob')).status, 403);
    });
  });
}

for (const backend of backends()) {
  describe(`an unconfirmed account arms nobody; nobody confirms an account they set up through another (${backend.name})`, () => {
    const { w, call, as, setUp, show, confirm, approve, twoPersonChange, events } =
      restWorld(backend);
    /** Whether `reply` is the refusal of `by`'s hand-over for want of a confirmation. */
    const refusedUnconfirmed = (reply: Reply, by: string) => {
      assert.equal(reply.status, 403, JSON.stringify(reply.body));
      assert.equal(reply.body.code, 'FORBIDDEN');
      assert.match(String(reply.body.message), new RegExp(`operator ${by} is not confirmed`));
    };

    before(async () => {
      await setUp('bootstrap', 'alice', ['admin']);
      await setUp('alice', 'dana', ['admin']);
      assert.equal((await confirm('alice', 'dana')).status, 200);
    });

    test('the benign neighbour: a confirmed admin sets up an approver, and the other person confirms it', async () => {
      await setUp('alice', 'carol', ['approver']);
      assert.equal((await show('carol')).set_up_by, 'operator:alice');
      const own = await confirm('alice', 'carol');
      assert.equal(own.status, 403, JSON.stringify(own.body));
      const confirmed = await confirm('dana', 'carol');
      assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
    });

    test('the attack: an unconfirmed admin alice set up cannot create, promote or arm an approver for her to confirm', async () => {
      await setUp('alice', 'mallory', ['admin']);
      assert.equal((await show('mallory')).confirmed, false);
      const before = (await events('operator.hand_over_refused')).length;
      // Creating an approver or an admin, with or without a password: refused, nothing created.
      refusedUnconfirmed(
        await call('POST', '/v1/operators', as('mallory'), { id: 'bob', roles: ['approver'] }),
        'mallory',
      );
      assert.equal((await call('GET', '/v1/operators/bob', ADMIN_TOKEN)).status, 404);
      // An account that decides nothing, with no credential: still hers to create.
      const owner = await call('POST', '/v1/operators', as('mallory'), {
        id: 'olga',
        roles: ['owner'],
      });
      assert.equal(owner.status, 201, JSON.stringify(owner.body));
      // But no credential and no deciding role for it: role, token, second factor, password.
      refusedUnconfirmed(
        await call('PATCH', '/v1/operators/olga', as('mallory'), { roles: ['owner', 'approver'] }),
        'mallory',
      );
      refusedUnconfirmed(
        await call('POST', '/v1/operators/olga/tokens', as('mallory'), {
          name: 'x',
          expires_in_days: 5,
        }),
        'mallory',
      );
      refusedUnconfirmed(
        await call('POST', '/v1/operators/olga/second-factor', as('mallory')),
        'mallory',
      );
      refusedUnconfirmed(
        await call('PUT', '/v1/operators/olga/password', as('mallory'), {
          password: 'a-long-passphrase-for-a-puppet-5821',
        }),
        'mallory',
      );
      const olga = await show('olga');
      assert.deepEqual(olga.roles, ['owner']);
      assert.equal(olga.has_password, false);
      assert.equal(olga.set_up_by, null);
      assert.equal((await call('GET', '/v1/operators/olga/tokens', ADMIN_TOKEN)).status, 200);
      assert.deepEqual(
        (await call('GET', '/v1/operators/olga/tokens', ADMIN_TOKEN)).body.tokens,
        [],
      );
      const refusals = await events('operator.hand_over_refused');
      assert.equal(refusals.length - before, 5);
      assert.ok(refusals.every((e) => e.actor === 'operator:mallory'));
      // The rest of the attack finds no approver: carol's count stays hers alone.
      const change = await twoPersonChange();
      assert.equal((await approve('carol', change)).body.status, 'pending');
    });

    test('defence in depth: once confirmed, the admin’s approvers are not hers to confirm; the other person confirms them', async () => {
      assert.equal((await confirm('dana', 'mallory')).status, 200);
      await setUp('mallory', 'bob', ['approver']);
      const bob = await show('bob');
      assert.equal(bob.set_up_by, 'operator:mallory');
      // alice set up mallory, who set up bob: alice is in bob's set-up chain.
      const refused = await confirm('alice', 'bob');
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.match(String(refused.body.message), /alice set up bob .*through operator:mallory/);
      assert.equal((await show('bob')).confirmed, false);
      const confirmed = await confirm('dana', 'bob');
      assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
    });
  });

  describe(`an approval counts while its approver still qualifies, read when the change is decided (${backend.name})`, () => {
    const { call, as, setUp, show, confirm, approve, twoPersonChange, events } = restWorld(backend);

    before(async () => {
      await setUp('bootstrap', 'alice', ['admin']);
      await setUp('alice', 'dana', ['admin']);
      assert.equal((await confirm('alice', 'dana')).status, 200);
      for (const id of ['bob', 'carol', 'erin', 'fay']) {
        await setUp('alice', id, ['approver']);
        assert.equal((await confirm('dana', id)).status, 200);
      }
    });

    test('the benign neighbour: two approvers who still qualify apply the change', async () => {
      const change = await twoPersonChange();
      assert.equal((await approve('bob', change)).body.status, 'pending');
      const applied = await approve('carol', change);
      assert.equal(applied.status, 200, JSON.stringify(applied.body));
      assert.equal(applied.body.status, 'applied');
    });

    test('an approver unconfirmed (password reset by an admin) after approving no longer counts', async () => {
      const change = await twoPersonChange();
      assert.equal((await approve('bob', change)).body.status, 'pending');
      const reset = await call('PUT', '/v1/operators/bob/password', as('alice'), {
        password: 'taken-over-by-alice-passphrase-9034',
      });
      assert.equal(reset.status, 204, JSON.stringify(reset.body));
      assert.equal((await show('bob')).confirmed, false);
      const second = await approve('carol', change);
      assert.equal(second.status, 200, JSON.stringify(second.body));
      assert.equal(second.body.status, 'pending');
      const approved = (await events('change.approved')).filter(
        (e) => e.subject === `change:${change}`,
      );
      assert.deepEqual(JSON.parse(approved.at(-1)?.details ?? '{}').not_counted, ['operator:bob']);
      // Another approver who qualifies makes the second pair of eyes.
      const applied = await approve('erin', change);
      assert.equal(applied.body.status, 'applied', JSON.stringify(applied.body));
    });

    test('an approver disabled after approving no longer counts', async () => {
      const change = await twoPersonChange();
      assert.equal((await approve('erin', change)).body.status, 'pending');
      const disabled = await call('POST', '/v1/operators/erin/disable', as('alice'));
      assert.equal(disabled.status, 200, JSON.stringify(disabled.body));
      assert.equal((await approve('carol', change)).body.status, 'pending');
      const applied = await approve('fay', change);
      assert.equal(applied.body.status, 'applied', JSON.stringify(applied.body));
    });

    test('an approver who lost the approver role after approving no longer counts', async () => {
      const change = await twoPersonChange();
      assert.equal((await approve('fay', change)).body.status, 'pending');
      const demoted = await call('PATCH', '/v1/operators/fay', as('alice'), {
        roles: ['auditor'],
      });
      assert.equal(demoted.status, 200, JSON.stringify(demoted.body));
      assert.equal((await approve('carol', change)).body.status, 'pending');
      // bob, confirmed again by the other person, counts again.
      assert.equal((await confirm('dana', 'bob')).status, 200);
      const applied = await approve('bob', change);
      assert.equal(applied.body.status, 'applied', JSON.stringify(applied.body));
    });
  });

  describe(`a change the bootstrap token requested is the genesis admin's own: one secret, one person (${backend.name})`, () => {
    const { w, call, as, setUp, show, confirm, approve, twoPersonChange, events } =
      restWorld(backend);

    before(async () => {
      await setUp('bootstrap', 'alice', ['admin', 'approver']);
      await setUp('alice', 'dana', ['admin', 'approver']);
      assert.equal((await confirm('alice', 'dana')).status, 200);
      await setUp('alice', 'bob', ['approver']);
      assert.equal((await confirm('dana', 'bob')).status, 200);
    });

    test('the benign neighbour: two confirmed approvers other than the genesis admin apply it', async () => {
      const change = await twoPersonChange('bootstrap');
      assert.equal((await w.tg.changes.get(change)).requested_by, 'admin-token');
      assert.equal((await approve('bob', change)).body.status, 'pending');
      const applied = await approve('dana', change);
      assert.equal(applied.status, 200, JSON.stringify(applied.body));
      assert.equal(applied.body.status, 'applied');
    });

    test('the attack: the genesis admin cannot approve what the bootstrap token asked for, as she cannot approve her own request', async () => {
      const own = await twoPersonChange('alice');
      const ownRefused = await approve('alice', own);
      assert.equal(ownRefused.status, 403, JSON.stringify(ownRefused.body));
      const change = await twoPersonChange('bootstrap');
      const refused = await approve('alice', change);
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.equal(refused.body.code, 'FORBIDDEN');
      assert.match(String(refused.body.message), /bootstrap admin token.*genesis admin/);
      assert.equal((await approve('bob', change)).body.status, 'pending');
      assert.deepEqual((await w.tg.changes.get(change)).approvers, ['operator:bob']);
      // The third person makes the second pair of eyes, as for alice's own request.
      assert.equal((await approve('dana', change)).body.status, 'applied');
    });

    test('the genesis admin confirmed again by another person still holds the bootstrap secret', async () => {
      const reset = await call('PUT', '/v1/operators/alice/password', as('dana'), {
        password: 'reset-by-dana-passphrase-5521',
      });
      assert.equal(reset.status, 204, JSON.stringify(reset.body));
      assert.equal((await confirm('bob', 'alice')).status, 200);
      const change = await twoPersonChange('bootstrap');
      const refused = await approve('alice', change);
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.match(String(refused.body.message), /genesis admin/);
    });

    test('kept as decided: an unconfirmed admin may disable a confirmed decider (audited), and only stalls a change', async () => {
      await setUp('dana', 'mallory', ['admin']);
      assert.equal((await show('mallory')).confirmed, false);
      const disabled = await call('POST', '/v1/operators/bob/disable', as('mallory'));
      assert.equal(disabled.status, 200, JSON.stringify(disabled.body));
      const [event] = (await events('operator.disabled')).filter(
        (e) => e.subject === 'operator:bob',
      );
      assert.equal(event?.actor, 'operator:mallory');
      const change = await twoPersonChange('bootstrap');
      assert.equal((await approve('bob', change)).status, 401);
      assert.equal((await approve('dana', change)).body.status, 'pending');
    });
  });
}
