/**
 * apply -f with `kind: Operator` (docs/configuration.md "Configuration documents"), over REST as
 * a user sees it: accounts without secrets, applied as the calling admin through the writes of
 * `operators create` and `operators update`, so every rule of theirs holds — a credential field is
 * refused by name, only an admin applies accounts, nobody changes their own roles or disables
 * themself, the bootstrap token makes no decider once the first admin is set up, a deciding role
 * handed over leaves the account unconfirmed and an unconfirmed account hands over nothing, and no
 * file leaves the install without an enabled admin. Each attack beside its benign neighbour; a
 * refusal writes nothing and a four-eyes one is audited.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MasterKey } from '../../src/domain/credentials/index.js';
import type { Operator } from '../../src/domain/operators/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { type Backend, backends } from '../support/backends.js';
import { openWorld, type Reply, type World } from '../support/world.js';

const ADMIN_TOKEN = 'admin-token-for-apply-operators-0123456789abcdef';
const CANARY = 'Canary-Pa55phrase-7f3a9c-do-not-echo';

const account = (id: string, roles: string[], extra: Record<string, unknown> = {}) => ({
  kind: 'Operator',
  spec: { id, roles, ...extra },
});

async function openAdminWorld(backend: Backend) {
  return openWorld({
    backend,
    rest: { adminToken: ADMIN_TOKEN },
    options: { masterKey: MasterKey.generate() },
  });
}

/** POST /v1/apply as `token`, with the query `query` (set, prune, dry_run). */
function applier(w: World) {
  return (docs: unknown[], token: string, query = 'set=ops'): Promise<Reply> =>
    w.send('POST', `/v1/apply?${query}`, docs, token);
}

const changesOf = (r: Reply) =>
  (r.body.changes as { subject: string; action: string; summary: string }[]) ?? [];

async function accounts(tg: Gateway) {
  const page = await tg.admin.operators.page({ limit: 500 });
  return page.items.map((o) => `${o.id}:${o.roles.join('+')}:${o.teams.join('+')}:${o.disabled}`);
}

async function eventCount(tg: Gateway): Promise<number> {
  return (await tg.events.list({ limit: 100_000 })).length;
}

async function refusalsOf(tg: Gateway, action: string) {
  return (await tg.events.list({ limit: 100_000 }))
    .filter((e) => e.action === action)
    .map((e) => ({ subject: e.subject, actor: e.actor, ...JSON.parse(e.details) }));
}

for (const backend of backends()) {
  describe(`apply Operator on ${backend.name}`, () => {
    let w: World;
    let tg: Gateway;
    let apply: ReturnType<typeof applier>;
    let alice = '';
    let bob = '';

    before(async () => {
      w = await openAdminWorld(backend);
      tg = w.tg;
      apply = applier(w);
      // The fresh install's path: the bootstrap token sets up the first admin, confirmed at once.
      const first = await apply([account('alice', ['admin'])], ADMIN_TOKEN, 'set=people');
      assert.equal(first.status, 200, first.text);
      const issued = await w.send(
        'POST',
        '/v1/operators/alice/tokens',
        { name: 'laptop', expires_in_days: 1 },
        ADMIN_TOKEN,
      );
      assert.equal(issued.status, 201, issued.text);
      alice = String(issued.body.token);
      const armed = await w.send('POST', '/v1/operators/alice/second-factor', {}, ADMIN_TOKEN);
      assert.equal(armed.status, 201, armed.text);
      assert.equal((await tg.admin.operators.get('alice')).confirmed, true);
    });
    after(async () => {
      await w?.close();
    });

    const team = [
      account('bob', ['auditor'], { name: 'Bob' }),
      account('carol', ['owner'], { teams: ['payments'] }),
    ];

    test('a dry run is the plan and writes nothing', async () => {
      const was = [await accounts(tg), await eventCount(tg)];
      const r = await apply(team, alice, 'set=ops&dry_run=true');
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(
        changesOf(r).map((c) => c.action),
        ['create', 'create'],
      );
      assert.deepEqual([await accounts(tg), await eventCount(tg)], was);
    });

    test('create, then the same file again changes nothing', async () => {
      const r = await apply(team, alice);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(
        changesOf(r).map((c) => [c.subject, c.action]),
        [
          ['operator bob', 'create'],
          ['operator carol', 'create'],
        ],
      );
      assert.match(
        changesOf(r)[0]?.summary ?? '',
        /^created \(auditor\): no password or second factor yet$/,
      );
      const created = (await tg.events.list({ subject: 'operator:carol', limit: 10 }))[0];
      assert.equal(created?.action, 'operator.created');
      assert.equal(created?.actor, 'operator:alice');
      const view = await tg.admin.operators.get('carol');
      assert.deepEqual([view.kind, view.has_password, view.teams], ['local', false, ['payments']]);

      const was = [await accounts(tg), await eventCount(tg)];
      const again = await apply(team, alice);
      assert.deepEqual(
        changesOf(again).map((c) => c.action),
        ['unchanged', 'unchanged'],
      );
      assert.deepEqual([await accounts(tg), await eventCount(tg)], was);
      bob = String(
        (
          await w.send(
            'POST',
            '/v1/operators/bob/tokens',
            { name: 'ci', expires_in_days: 1 },
            alice,
          )
        ).body.token,
      );
    });

    test('update: what differs is changed, audited as the applying admin', async () => {
      const r = await apply(
        [
          account('bob', ['auditor'], { name: 'Bob B.' }),
          account('carol', ['owner'], { teams: ['payments', 'billing'] }),
        ],
        alice,
      );
      assert.deepEqual(
        changesOf(r).map((c) => [c.action, c.summary]),
        [
          ['update', 'updated: name Bob B.'],
          ['update', 'updated: teams billing, payments'],
        ],
      );
      const updated = (await tg.events.list({ subject: 'operator:carol', limit: 10 })).at(-1);
      assert.equal(updated?.action, 'operator.updated');
      assert.equal(updated?.actor, 'operator:alice');
    });

    test('narrower files: drift without --prune, disabled (never deleted) with it; declared again, enabled', async () => {
      const narrow = [account('bob', ['auditor'], { name: 'Bob B.' })];
      const was = [await accounts(tg), await eventCount(tg)];
      const drift = await apply(narrow, alice);
      assert.deepEqual(
        changesOf(drift)
          .filter((c) => c.action === 'drift')
          .map((c) => c.subject),
        ['operator carol'],
      );
      assert.deepEqual([await accounts(tg), await eventCount(tg)], was);

      // A one-off account (no set) is never listed nor pruned.
      const aliceOp: Operator = {
        id: 'alice',
        name: 'alice',
        roles: ['admin'],
        teams: [],
        authenticatedBy: 'personal-token',
      };
      const oneOff = await tg.config.apply(
        [account('olive', ['auditor'])],
        { id: 'operator:alice', via: 'library' },
        { set: null, operator: aliceOp },
      );
      assert.equal(oneOff.changes[0]?.action, 'create');
      const pruned = await apply(narrow, alice, 'set=ops&prune=true');
      assert.equal(pruned.status, 200, pruned.text);
      assert.ok(!changesOf(pruned).some((x) => x.subject === 'operator olive'));
      assert.equal((await tg.admin.operators.get('olive')).disabled, false);
      const c = changesOf(pruned).find((x) => x.subject === 'operator carol');
      assert.deepEqual([c?.action, c?.summary], ['prune', 'disabled']);
      const carol = await tg.admin.operators.get('carol');
      assert.equal(carol.disabled, true, 'disabled, and still there');
      const event = (await tg.events.list({ subject: 'operator:carol', limit: 10 })).at(-1);
      assert.equal(event?.action, 'operator.disabled');
      assert.equal(event?.actor, 'operator:alice');

      const back = await apply(
        [...narrow, account('carol', ['owner'], { teams: ['billing', 'payments'] })],
        alice,
      );
      assert.deepEqual(
        changesOf(back).map((x) => [x.subject, x.action, x.summary]),
        [
          ['operator bob', 'unchanged', 'unchanged'],
          [
            'operator carol',
            'update',
            'updated: enabled; adopted (existed, made by hand or before sets)',
          ],
        ],
      );
    });

    test('a credential field is refused by name, never echoed, and nothing is written; the same account without it applies', async () => {
      const was = [await accounts(tg), await eventCount(tg)];
      for (const field of [
        'password',
        'password_hash',
        'totpSecret',
        'passkey',
        'token',
        'api-key',
      ]) {
        const r = await apply(
          [account('bob', ['auditor']), account('dora', ['auditor'], { [field]: CANARY })],
          alice,
        );
        assert.equal(r.status, 422, `${field}: ${r.text}`);
        assert.equal(r.body.code, 'CONFIG_INVALID');
        assert.ok(!r.text.includes(CANARY), `${field}: the value is never echoed`);
        const problems = (r.body.details as { problems: { pointer: string; rule: string }[] })
          .problems;
        assert.deepEqual(
          problems.map((p) => [p.pointer, p.rule]),
          [[`/1/spec/${field}`, 'operator.credential']],
        );
      }
      assert.deepEqual([await accounts(tg), await eventCount(tg)], was);
      const all = JSON.stringify(await tg.events.list({ limit: 100_000 }));
      assert.ok(!all.includes(CANARY));
      const ok = await apply([account('dora', ['auditor'])], alice, 'set=dora');
      assert.equal(ok.status, 200, ok.text);
    });

    test('only an admin applies accounts: an auditor over REST, an owner through the library', async () => {
      const was = [await accounts(tg), await eventCount(tg)];
      const r = await apply([account('mallory', ['admin'])], bob, 'set=bob');
      assert.equal(r.status, 403, r.text);
      const owner: Operator = {
        id: 'carol',
        name: 'carol',
        roles: ['owner'],
        teams: ['payments'],
        authenticatedBy: 'personal-token',
      };
      await assert.rejects(
        tg.config.apply(
          [account('mallory', ['auditor'])],
          { id: 'operator:carol', via: 'library' },
          {
            operator: owner,
            set: 'lib',
          },
        ),
        (err: { code?: string }) => err.code === 'FORBIDDEN',
      );
      // Without a person at all, the library cannot apply an account either.
      await assert.rejects(
        tg.config.apply(
          [account('mallory', ['auditor'])],
          { id: 'lib', via: 'library' },
          { set: 'lib' },
        ),
        (err: { code?: string }) => err.code === 'FORBIDDEN',
      );
      const after = await accounts(tg);
      assert.deepEqual(after, was[0]);
      assert.ok(!after.some((a) => a.startsWith('mallory:')));
    });

    test('an admin cannot change their own roles nor disable themself by a file; declaring themself as they are is unchanged', async () => {
      const was = [await accounts(tg)];
      for (const [doc, reason] of [
        [account('alice', ['admin', 'approver']), 'own_roles'],
        [account('alice', ['admin'], { disabled: true }), 'own_account_disabled'],
      ] as const) {
        const r = await apply(
          [account('bob', ['auditor'], { name: 'Bobby' }), doc],
          alice,
          'set=self',
        );
        assert.equal(r.status, 403, r.text);
        const audited = (await refusalsOf(tg, 'operator.four_eyes_refused')).at(-1);
        assert.deepEqual(
          [audited?.subject, audited?.actor, audited?.act, audited?.reason],
          ['operator:alice', 'operator:alice', 'apply', reason],
        );
      }
      assert.deepEqual(
        [await accounts(tg)],
        was,
        'bob was not renamed either: the file is refused whole',
      );
      const same = await apply([account('alice', ['admin'])], alice, 'set=self');
      assert.match(changesOf(same)[0]?.summary ?? '', /^unchanged; also declared by set people$/);
      assert.deepEqual(
        changesOf(same).map((c) => c.action),
        ['unchanged'],
      );
    });

    test('a deciding role given by a file is unconfirmed until another person confirms it, as through `operators`', async () => {
      const r = await apply(
        [account('eve', ['admin']), account('bob', ['admin'], { name: 'Bob B.' })],
        alice,
        'set=deciders',
      );
      assert.equal(r.status, 200, r.text);
      for (const id of ['eve', 'bob']) {
        const view = await tg.admin.operators.get(id);
        assert.deepEqual([view.confirmed, view.set_up_by], [false, 'operator:alice'], id);
        const change = changesOf(r).find((c) => c.subject === `operator ${id}`);
        assert.match(change?.summary ?? '', /unconfirmed: counts in no two-person decision/);
      }
      // The same through `operators create`: the rules are one.
      const made = await w.send('POST', '/v1/operators', { id: 'fred', roles: ['admin'] }, alice);
      assert.equal(made.status, 201, made.text);
      assert.equal((await tg.admin.operators.get('fred')).confirmed, false);
    });

    test('pruned, an admin’s own account is kept with the reason, beside another enabled admin', async () => {
      // Pruned, her own account is kept, with the reason (once no other set declares it).
      const bobOnly = [account('bob', ['auditor'], { name: 'Bob B.' })];
      const other = await apply(bobOnly, alice, 'set=people&prune=true');
      assert.match(
        changesOf(other).find((c) => c.subject === 'operator alice')?.summary ?? '',
        /set self still declares it/,
      );
      const pruned = await apply(
        [account('bob', ['auditor'], { name: 'Bob B.' })],
        alice,
        'set=self&prune=true',
      );
      const kept = changesOf(pruned).find((c) => c.subject === 'operator alice');
      assert.equal(kept?.action, 'drift');
      assert.match(kept?.summary ?? '', /kept \(an admin cannot disable their own account\)/);
      assert.equal((await tg.admin.operators.get('alice')).disabled, false);
    });

    test('an unconfirmed admin hands no deciding role over by a file (audited); it may still apply an auditor', async () => {
      const eve = String(
        (await w.send('POST', '/v1/operators/eve/tokens', { name: 'x', expires_in_days: 1 }, alice))
          .body.token,
      );
      const was = [await accounts(tg), (await refusalsOf(tg, 'operator.hand_over_refused')).length];
      const r = await apply(
        [account('gina', ['auditor']), account('frank', ['approver'])],
        eve,
        'set=eve',
      );
      assert.equal(r.status, 403, r.text);
      assert.match(String(r.body.message), /is not confirmed/);
      assert.deepEqual(
        [await accounts(tg), (await refusalsOf(tg, 'operator.hand_over_refused')).length],
        [was[0], Number(was[1]) + 1],
      );
      const ok = await apply([account('gina', ['auditor'])], eve, 'set=eve');
      assert.equal(ok.status, 200, ok.text);
    });

    test('once the first admin is set up the bootstrap token makes no decider by a file (audited); it still applies an auditor', async () => {
      const r = await apply([account('mal', ['admin'])], ADMIN_TOKEN, 'set=boot');
      assert.equal(r.status, 403, r.text);
      assert.ok(!(await accounts(tg)).some((a) => a.startsWith('mal:')));
      const audited = (await refusalsOf(tg, 'operator.four_eyes_refused')).at(-1);
      assert.deepEqual([audited?.act, audited?.reason], ['apply', 'bootstrap_after_setup']);
      const ok = await apply([account('audrey', ['auditor'])], ADMIN_TOKEN, 'set=boot');
      assert.equal(ok.status, 200, ok.text);
    });
  });

  describe(`apply Operator keeps an enabled admin on ${backend.name}`, () => {
    let w: World;
    let tg: Gateway;
    let apply: ReturnType<typeof applier>;
    before(async () => {
      w = await openAdminWorld(backend);
      tg = w.tg;
      apply = applier(w);
    });
    after(async () => {
      await w?.close();
    });

    test('no file disables or demotes the last enabled admin, nor prunes it; with another admin it may', async () => {
      const made = await apply([account('root', ['admin'])], ADMIN_TOKEN, 'set=root');
      assert.equal(made.status, 200, made.text);
      for (const doc of [
        account('root', ['admin'], { disabled: true }),
        account('root', ['auditor']),
      ]) {
        const r = await apply([doc], ADMIN_TOKEN, 'set=root');
        assert.equal(r.status, 403, r.text);
        assert.match(String(r.body.message), /would leave no enabled admin account/);
      }
      const audited = (await refusalsOf(tg, 'operator.four_eyes_refused')).at(-1);
      assert.deepEqual([audited?.subject, audited?.reason], ['operator:root', 'last_admin']);
      assert.equal((await tg.admin.operators.get('root')).disabled, false);
      const pruned = await apply(
        [account('someone', ['auditor'])],
        ADMIN_TOKEN,
        'set=root&prune=true',
      );
      assert.equal(pruned.status, 200, pruned.text);
      const kept = changesOf(pruned).find((c) => c.subject === 'operator root');
      assert.deepEqual(
        [kept?.action, kept?.summary],
        ['drift', 'no longer declared: kept, it is the last enabled admin account'],
      );
      // With a second admin declared, the first may go.
      const two = await apply(
        [account('root', ['auditor']), account('root2', ['admin'])],
        ADMIN_TOKEN,
        'set=root',
      );
      assert.equal(two.status, 200, two.text);
      assert.deepEqual((await tg.admin.operators.get('root')).roles, ['auditor']);
    });
  });
}
