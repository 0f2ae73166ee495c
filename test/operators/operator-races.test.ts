/**
 * Operator writes at the same moment (attack round 22, Y9; docs/operators-and-approvals.md "Always
 * an enabled admin"): every write of an operator account, and every apply as an operator, runs
 * under one lock of the operator accounts (a PostgreSQL advisory lock; SQLite's writes run alone
 * anyway), and inside it reads the author's own account again and the rule that an enabled admin
 * remains. So two admins disabling (or demoting) each other at once never leave the install
 * without an admin: one wins, the other is refused (FORBIDDEN: its author was disabled, or
 * UNAUTHENTICATED when its token was read after); and a write of an admin being disabled never
 * commits after the disable (before the fix this failed on SQLite too: the apply was authorised
 * before the disable and committed after it). The benign neighbours: one admin disabling, enabling or demoting
 * another, alone, works; an admin's apply that races nothing commits.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { BOOTSTRAP_OPERATOR, type Operator } from '../../src/domain/operators/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { addOperators, openWorld, type Reply, type World } from '../support/world.js';

const ADMIN_TOKEN = 'admin-token-for-operator-races-0123456789abcdef';
const ROUNDS = 4;

async function enabledAdmins(tg: Gateway): Promise<string[]> {
  const page = await tg.admin.operators.page({ limit: 500 });
  return page.items
    .filter((o) => !o.disabled && o.roles.includes('admin'))
    .map((o) => o.id)
    .sort();
}

async function disabled(tg: Gateway, id: string): Promise<boolean> {
  return (await tg.admin.operators.get(id)).disabled;
}

/** The loser of a race: refused, its author disabled (403) or no longer authenticated (401). */
function assertRefusedLoser(r: Reply, what: string): void {
  assert.ok(r.status === 403 || r.status === 401, `${what}: ${r.status} ${r.text}`);
  if (r.status === 403) assert.equal(r.body.code, 'FORBIDDEN', r.text);
}

for (const backend of backends()) {
  describe(`operator writes at the same moment on ${backend.name}`, () => {
    let w: World;
    const ids = Array.from({ length: ROUNDS }, (_, i) => [`ra${i}`, `rb${i}`] as const);
    const tokens: Record<string, string> = {};

    before(async () => {
      w = await openWorld({
        backend,
        rest: { adminToken: ADMIN_TOKEN },
        options: { masterKey: MasterKey.generate() },
      });
      Object.assign(
        tokens,
        await addOperators(
          w.tg,
          [...ids.flat(), 'pa', 'pb', 'da', 'db'].map((id) => ({
            id,
            roles: ['admin'] as const,
            token: true,
          })),
        ),
      );
      // Only the first pair is enabled; the bootstrap token can still change deciders (nobody
      // acted as themself yet). Each round's winner brings in the next pair.
      for (const id of [...ids.slice(1).flat(), 'pa', 'pb', 'da', 'db']) {
        await w.tg.admin.operators.update(BOOTSTRAP_OPERATOR, id, { disabled: true });
      }
    });
    after(() => w?.close());
    const as = (who: string) => ({
      enable: (id: string) =>
        w.send('PATCH', `/v1/operators/${id}`, { disabled: false }, tokens[who]),
      disable: (id: string) =>
        w.send('POST', `/v1/operators/${id}/disable`, undefined, tokens[who]),
      setRoles: (id: string, roles: string[]) =>
        w.send('PATCH', `/v1/operators/${id}`, { roles }, tokens[who]),
    });

    test('two admins disabling each other at once: one wins, the loser is refused, an admin remains', async () => {
      let forbidden = 0;
      for (const [a, b] of ids) {
        assert.deepEqual(await enabledAdmins(w.tg), [a, b].sort());
        const [ra, rb] = await Promise.all([as(a).disable(b), as(b).disable(a)]);
        const admins = await enabledAdmins(w.tg);
        assert.equal(admins.length, 1, `round ${a}/${b}: ${ra.status} ${rb.status} → ${admins}`);
        const [winner, loser] = admins[0] === a ? [ra, rb] : [rb, ra];
        assert.equal(winner.status, 200, winner.text);
        assertRefusedLoser(loser, `round ${a}/${b}`);
        if (loser.status === 403) forbidden += 1;
        // Benign neighbours: the survivor enables the next pair, and one of them disables the
        // survivor (not the last admin: two more are enabled), each alone.
        const next = ids[ids.findIndex(([x]) => x === a) + 1];
        const survivor = admins[0] ?? '';
        if (!next) continue;
        for (const id of next) {
          const r = await as(survivor).enable(id);
          assert.equal(r.status, 200, r.text);
        }
        const r = await as(next[0]).disable(survivor);
        assert.equal(r.status, 200, r.text);
      }
      // A loser refused inside (its author read again under the lock) is audited.
      const audited = (await w.tg.events.list({ limit: 100_000 })).filter(
        (e) =>
          e.action === 'operator.four_eyes_refused' &&
          JSON.parse(e.details).reason === 'actor_disabled',
      );
      assert.equal(audited.length, forbidden);
    });

    test('two admins demoting each other at once: one wins, an admin remains', async () => {
      const [survivor] = await enabledAdmins(w.tg);
      assert.ok(survivor);
      for (const id of ['pa', 'pb']) {
        const r = await as(survivor).enable(id);
        assert.equal(r.status, 200, r.text);
      }
      // Benign neighbour: an admin demotes another who is not the last admin, alone.
      const demoted = await as('pa').setRoles(survivor, ['auditor']);
      assert.equal(demoted.status, 200, demoted.text);
      assert.deepEqual(await enabledAdmins(w.tg), ['pa', 'pb']);
      const [ra, rb] = await Promise.all([
        as('pa').setRoles('pb', ['auditor']),
        as('pb').setRoles('pa', ['auditor']),
      ]);
      const admins = await enabledAdmins(w.tg);
      assert.equal(admins.length, 1, `${ra.status} ${rb.status} → ${admins}`);
      const [winner, loser] = admins[0] === 'pa' ? [ra, rb] : [rb, ra];
      assert.equal(winner.status, 200, winner.text);
      // The loser's token lost `admin` with the account: it holds no role left (401) or its
      // author is read again under the lock (403).
      assertRefusedLoser(loser, 'demote');
    });

    test('an apply of an admin being disabled never commits after the disable', async () => {
      const [survivor] = await enabledAdmins(w.tg);
      assert.ok(survivor);
      for (const id of ['da', 'db']) {
        const r = await as(survivor).enable(id);
        assert.equal(r.status, 200, r.text);
      }
      const set = (name: string) => [
        { kind: 'DestinationSet', spec: { name, kind: 'host', members: ['example.com'] } },
      ];
      // Benign neighbour: da's apply alone commits.
      const alone = await w.send('POST', '/v1/apply?set=race-alone', set('race-alone'), tokens.da);
      assert.equal(alone.status, 200, alone.text);
      const [applied, disabling] = await Promise.all([
        w.send('POST', '/v1/apply?set=race', set('race-set'), tokens.da),
        as('db').disable('da'),
      ]);
      assert.equal(disabling.status, 200, disabling.text);
      assert.ok(await disabled(w.tg, 'da'));
      const events = (await w.tg.events.list({ limit: 100_000 })).sort((x, y) => x.seq - y.seq);
      // The race's disable: the last of da's (da was disabled before, when the world was made).
      const disabledAt = events.findLast(
        (e) => e.action === 'operator.disabled' && e.subject === 'operator:da',
      )?.seq;
      const createdAt = events.find(
        (e) => e.action === 'destination_set.created' && e.subject === 'destination_set:race-set',
      )?.seq;
      assert.ok(disabledAt !== undefined);
      if (applied.status === 200) {
        assert.ok(createdAt !== undefined && createdAt < disabledAt, `${createdAt} ${disabledAt}`);
      } else {
        assertRefusedLoser(applied, 'apply');
        assert.equal(createdAt, undefined);
      }
    });
  });

  describe(`the last enabled admin, library callers at once, on ${backend.name}`, () => {
    let w: World;
    const as = (id: string): Operator => ({
      id,
      name: id,
      roles: ['admin'],
      teams: [],
      authenticatedBy: 'personal-token',
    });

    before(async () => {
      w = await openWorld({ backend, options: { masterKey: MasterKey.generate() } });
      await addOperators(w.tg, [
        { id: 'la', roles: ['admin'] },
        { id: 'lb', roles: ['admin'] },
      ]);
    });
    after(() => w?.close());

    test('two in-process disables of each other: the second is refused last_admin', async () => {
      // The library acts as whom its caller names (the host holds the data folder: no token to
      // read again), so the rule that an enabled admin remains is what refuses the second.
      const results = await Promise.allSettled([
        w.tg.admin.operators.update(as('la'), 'lb', { disabled: true }, 'library'),
        w.tg.admin.operators.update(as('lb'), 'la', { disabled: true }, 'library'),
      ]);
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      const refused = results.find((r) => r.status === 'rejected');
      assert.ok(refused && refused.status === 'rejected');
      assert.equal((refused.reason as { code?: string }).code, 'FORBIDDEN');
      assert.match(String((refused.reason as Error).message), /no enabled admin/);
      assert.equal((await enabledAdmins(w.tg)).length, 1);
      const audited = (await w.tg.events.list({ limit: 100_000 })).filter(
        (e) => e.action === 'operator.four_eyes_refused',
      );
      assert.equal(audited.length, 1);
      assert.equal(JSON.parse(audited[0]?.details ?? '{}').reason, 'last_admin');
    });

    test('the documented way back: a disabled admin enabled in-process as herself', async () => {
      const [left] = await enabledAdmins(w.tg);
      const other = left === 'la' ? 'lb' : 'la';
      const view = await w.tg.admin.operators.update(
        as(other),
        other,
        { disabled: false },
        'library',
      );
      assert.equal(view.disabled, false);
    });
  });
}
