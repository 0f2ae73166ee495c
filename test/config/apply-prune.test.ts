/**
 * apply --prune (docs/tools-and-catalog.md "Configuration as code"): a set's files converge. What
 * the set declared before and no longer declares is listed as drift and kept without --prune, and
 * with it revoked, disabled, withdrawn or deleted, each audited; applying the same files twice
 * changes nothing; nothing another set declares, or made by other means, is touched.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Actor, ToolgateError } from '../../src/core/index.js';
import type { Operator } from '../../src/domain/operators/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { validTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';

const admin: Actor = { id: 'cli:test', via: 'cli' };

const tool = (id: string) => ({ kind: 'Tool', spec: validTool({ id, name: id }) });
const agent = (id: string) => ({ kind: 'Agent', spec: { id, owner: 'team-a' } });
const grant = (agentId: string, capabilities: string[]) => ({
  kind: 'Grant',
  spec: { agent: agentId, capabilities },
});
const user = (id: string) => ({ kind: 'User', spec: { id, permissions: ['billing:read'] } });
const policy = (id: string) => ({
  kind: 'Policy',
  spec: {
    id,
    text: 'forbid (principal, action, resource) when { context.spend_cents > 100000 };',
  },
});

/** Everything prune may touch, as one comparable value. */
async function state(tg: Gateway) {
  return {
    tools: (await tg.catalog.list()).map((t) => `${t.id}@${t.version}:${t.lifecycle}`).sort(),
    agents: (await tg.agents.list())
      .map((a) => `${a.id}:${a.enabled}:${a.capabilities.join(',')}`)
      .sort(),
    users: (await tg.users.list()).map((u) => `${u.id}:${u.enabled}`).sort(),
    events: (await tg.events.list({ limit: 100_000 })).length,
  };
}

for (const backend of backends()) {
  describe(`apply --prune on ${backend.name}`, () => {
    let world: World;
    let tg: Gateway;
    before(async () => {
      world = await openWorld({ backend });
      tg = world.tg;
    });
    after(async () => {
      await world.close();
    });

    const wide = [
      agent('prune-a1'),
      agent('prune-a2'),
      grant('prune-a1', ['billing:read', 'crm:read']),
      user('prune-u1'),
      tool('prune_tool_one'),
      tool('prune_tool_two'),
      policy('prune-p1'),
    ];
    const narrow = [agent('prune-a1'), grant('prune-a1', ['billing:read']), tool('prune_tool_one')];

    test('the same files twice: the second apply changes nothing and reports no drift', async () => {
      const first = await tg.config.apply(wide, admin);
      assert.ok(first.changes.every((c) => c.action === 'create'));
      const was = await state(tg);
      const again = await tg.config.apply(wide, admin, { prune: true });
      assert.ok(
        again.changes.every((c) => c.action === 'unchanged'),
        JSON.stringify(again),
      );
      assert.deepEqual(await state(tg), was);
    });

    test('narrower files without --prune: every undeclared object is drift, and nothing changes', async () => {
      const was = await state(tg);
      const r = await tg.config.apply(narrow, admin);
      const drift = r.changes.filter((c) => c.action === 'drift').map((c) => c.subject);
      assert.deepEqual(drift.sort(), [
        'agent prune-a2',
        'grant prune-a1 crm:read',
        'policy prune-p1',
        'tool prune_tool_two@1.0.0',
        'user prune-u1',
      ]);
      assert.ok(r.changes.every((c) => c.action === 'unchanged' || c.action === 'drift'));
      assert.deepEqual(await state(tg), was);
    });

    test('a dry run with --prune is the plan and writes nothing', async () => {
      const was = await state(tg);
      const plan = await tg.config.apply(narrow, admin, { prune: true, dryRun: true });
      const pruned = plan.changes.filter((c) => c.action === 'prune');
      assert.equal(pruned.length, 5, JSON.stringify(plan.changes));
      assert.deepEqual(await state(tg), was);
    });

    test('--prune narrows the grant, disables the agent and user, withdraws the tool, deletes the policy, and audits each', async () => {
      const r = await tg.config.apply(narrow, admin, { prune: true });
      const summary = Object.fromEntries(
        r.changes.filter((c) => c.action === 'prune').map((c) => [c.subject, c.summary]),
      );
      assert.equal(summary['grant prune-a1 crm:read'], 'revoked');
      assert.equal(summary['agent prune-a2'], 'disabled');
      assert.equal(summary['user prune-u1'], 'disabled');
      assert.equal(summary['policy prune-p1'], 'deleted');
      assert.match(summary['tool prune_tool_two@1.0.0'] ?? '', /^deprecated, retires \d{4}-/);

      const a1 = await tg.agents.get('prune-a1');
      assert.deepEqual(a1.capabilities, ['billing:read']);
      assert.equal(a1.enabled, true, 'the declared agent stays enabled');
      assert.equal((await tg.agents.get('prune-a2')).enabled, false);
      assert.ok((await tg.users.list()).some((u) => u.id === 'prune-u1' && !u.enabled));
      const two = (await tg.catalog.list()).find((t) => t.id === 'prune_tool_two');
      assert.equal(two?.lifecycle, 'deprecated', 'withdrawn through its lifecycle, not deleted');
      const one = (await tg.catalog.list()).find((t) => t.id === 'prune_tool_one');
      assert.equal(one?.lifecycle, 'active', 'the declared tool is untouched');

      const actions = (await tg.events.list({ limit: 100_000 })).map((e) => e.action);
      for (const a of [
        'grant.revoked',
        'agent.disabled',
        'user.disabled',
        'policy.deleted',
        'tool.deprecated',
      ]) {
        assert.ok(actions.includes(a), `${a} is in the event record`);
      }

      // Converged: the same narrow files again change nothing and report nothing.
      const was = await state(tg);
      const again = await tg.config.apply(narrow, admin, { prune: true });
      assert.ok(
        again.changes.every((c) => c.action === 'unchanged'),
        JSON.stringify(again),
      );
      assert.deepEqual(await state(tg), was);
    });

    test('declaring a pruned agent again enables it', async () => {
      const r = await tg.config.apply([...narrow, agent('prune-a2')], admin);
      assert.equal(r.changes.find((c) => c.subject === 'agent prune-a2')?.action, 'update');
      assert.equal((await tg.agents.get('prune-a2')).enabled, true);
    });

    test('another set, and objects made by other means, are never pruned', async () => {
      // Set "ops" declares b1 and the shared agent; the default set then drops the shared one.
      await tg.config.apply([agent('prune-b1'), agent('prune-shared')], admin, { set: 'ops' });
      await tg.config.apply([...narrow, agent('prune-a2'), agent('prune-shared')], admin);
      // Made outside apply: a grant added by hand to a declared agent.
      await tg.config.apply([grant('prune-a1', ['notes:read'])], admin, { set: null });
      const r = await tg.config.apply([...narrow, agent('prune-a2')], admin, { prune: true });
      assert.match(
        r.changes.find((c) => c.subject === 'agent prune-shared')?.summary ?? '',
        /set ops still declares it/,
      );
      assert.equal((await tg.agents.get('prune-shared')).enabled, true);
      assert.equal((await tg.agents.get('prune-b1')).enabled, true);
      assert.deepEqual((await tg.agents.get('prune-a1')).capabilities, [
        'billing:read',
        'notes:read',
      ]);
    });

    test('pruning a grant still waiting for approvers withdraws its change request, audited; drift lists it', async () => {
      const gatedTool = {
        kind: 'Tool',
        spec: validTool({
          id: 'prune_gated',
          name: 'prune_gated',
          access_tier: 'privileged',
          required_capabilities: ['gated:use'],
        }),
      };
      const base = [agent('prune-fe1'), gatedTool];
      const first = await tg.config.apply([...base, grant('prune-fe1', ['gated:use'])], admin, {
        set: 'fe',
      });
      assert.match(JSON.stringify(first.changes), /awaiting 1 approver/);
      const pending = async () =>
        (await tg.changes.list('pending')).filter(
          (c) => c.subject === 'grant gated:use to prune-fe1',
        );
      const [change] = await pending();
      assert.ok(change);
      const drift = await tg.config.apply(base, admin, { set: 'fe' });
      assert.match(
        drift.changes.find((c) => c.subject === 'grant prune-fe1 gated:use')?.summary ?? '',
        new RegExp(`change ${change.id} is pending`),
      );
      const r = await tg.config.apply(base, admin, { set: 'fe', prune: true });
      assert.match(
        r.changes.find((c) => c.subject === 'grant prune-fe1 gated:use')?.summary ?? '',
        new RegExp(`not held; change ${change.id} withdrawn`),
      );
      assert.deepEqual(await pending(), []);
      assert.equal((await tg.changes.get(change.id)).status, 'withdrawn');
      const events = await tg.events.list({ limit: 100_000 });
      assert.ok(
        events.some((e) => e.action === 'change.withdrawn' && e.subject === `change:${change.id}`),
      );
    });

    test('the plan says when another set also declares an object, and when a set adopts one made by hand', async () => {
      await tg.config.apply([agent('prune-hand'), grant('prune-hand', ['hand:one'])], admin, {
        set: null,
      });
      const adopt = await tg.config.apply(
        [agent('prune-hand'), grant('prune-hand', ['hand:one'])],
        admin,
        { set: 'adopt' },
      );
      for (const subject of ['agent prune-hand', 'grant prune-hand']) {
        const c = adopt.changes.find((x) => x.subject === subject);
        assert.equal(c?.action, 'unchanged', subject);
        assert.match(c?.summary ?? '', /adopted \(existed, made by hand or before sets\)/, subject);
      }
      const other = await tg.config.apply([agent('prune-hand')], admin, { set: 'other' });
      const c = other.changes.find((x) => x.subject === 'agent prune-hand');
      assert.match(c?.summary ?? '', /also declared by set adopt/);
      assert.doesNotMatch(c?.summary ?? '', /adopted/);
      // Applying again: no longer new to the set, still shared.
      const again = await tg.config.apply([agent('prune-hand')], admin, { set: 'adopt' });
      const summary = again.changes.find((x) => x.subject === 'agent prune-hand')?.summary ?? '';
      assert.match(summary, /also declared by set other/);
      assert.doesNotMatch(summary, /adopted/);
    });

    test('a bad set name or an owner asking to prune is refused and changes nothing', async () => {
      const was = await state(tg);
      for (const set of ['', 'Ops', '../x', 'a'.repeat(65), 'a b']) {
        await assert.rejects(
          tg.config.apply(narrow, admin, { set, prune: true }),
          (err: ToolgateError) => err.code === 'INPUT_INVALID',
          set,
        );
      }
      const owner: Operator = {
        id: 'olga',
        name: 'Olga',
        roles: ['owner'],
        teams: ['team-a'],
        authenticatedBy: 'token',
      } as unknown as Operator;
      await assert.rejects(
        tg.config.apply([agent('prune-a1')], admin, { prune: true, operator: owner }),
        (err: ToolgateError) => err.code === 'FORBIDDEN',
      );
      assert.deepEqual(await state(tg), was);
    });
  });
}
