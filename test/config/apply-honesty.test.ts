/**
 * What `apply -f` says is what it does (docs/configuration.md "Configuration documents",
 * "Converging"; attack round 22): one object declared twice in one file is refused whole, naming
 * both documents, and nothing is applied (Y2); the plan of what is no longer declared says what
 * `--prune` really does — an object a rule keeps is never promised a deletion, never marked as
 * pruned nor counted as a change, and the dry run says what the apply says (Y3); the reserved id
 * of the demo seed's reviewer is no one's account (Y7). Over REST as a user sees it, on SQLite and
 * PostgreSQL; each attack beside its benign neighbour.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { BOOTSTRAP_OPERATOR } from '../../src/domain/operators/index.js';
import type { Resolver } from '../../src/execution/sandbox/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { type Backend, backends } from '../support/backends.js';
import { validTool } from '../support/tools.js';
import { openWorld, type Reply, type World } from '../support/world.js';

const ADMIN_TOKEN = 'admin-token-for-apply-honesty-0123456789abcdef';
const resolver: Resolver = async (host) => {
  if (host !== 'hooks.test') throw new Error(`no such host ${host}`);
  return [{ address: '93.184.216.34', family: 4 }];
};

const operator = (id: string, roles: string[]) => ({ kind: 'Operator', spec: { id, roles } });
const channel = (name: string, url: string, team = 'payments') => ({
  kind: 'OwnerChannel',
  spec: { name, team, url },
});
const dset = (name: string, members: string[] = []) => ({
  kind: 'DestinationSet',
  spec: { name, kind: 'email', members },
});
const agent = (id: string, owner = 'team-a') => ({ kind: 'Agent', spec: { id, owner } });
const user = (id: string, permissions = ['billing:read']) => ({
  kind: 'User',
  spec: { id, permissions },
});
const grant = (agentId: string, capabilities: string[]) => ({
  kind: 'Grant',
  spec: { agent: agentId, capabilities },
});
const policy = (id: string, cents: number) => ({
  kind: 'Policy',
  spec: {
    id,
    text: `forbid (principal, action, resource) when { context.spend_cents > ${cents} };`,
  },
});
const tool = (id: string, description: string, extra: Record<string, unknown> = {}) => ({
  kind: 'Tool',
  spec: validTool({ id, name: id, description, ...extra }),
});
/** A read tool (active once applied) whose `contact` rule names set `setName`. */
const reader = (id: string, setName: string) =>
  tool(id, 'Look up one contact by address.', {
    input_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['contact'],
      properties: { contact: { type: 'string', maxLength: 254 } },
    },
    destinations: [{ argument: '/contact', kind: 'email', allow: { sets: [setName] } }],
  });

type Change = { subject: string; action: string; summary: string; prunable?: boolean };
const changesOf = (r: Reply) => (r.body.changes as Change[] | undefined) ?? [];
const problemsOf = (r: Reply) =>
  ((r.body.details as { problems?: { pointer: string; message: string; rule: string }[] })
    ?.problems ?? []) as { pointer: string; message: string; rule: string }[];

async function openAdminWorld(backend: Backend) {
  return openWorld({
    backend,
    rest: { adminToken: ADMIN_TOKEN },
    options: { masterKey: MasterKey.generate(), outbound: { resolver } },
  });
}

async function written(tg: Gateway) {
  return {
    events: (await tg.events.list({ limit: 100_000 })).length,
    operators: (await tg.admin.operators.page({ limit: 500 })).items.map((o) => o.id),
    channels: (await tg.ownerChannels.list()).map((c) => `${c.team}/${c.name}`),
  };
}

for (const backend of backends()) {
  describe(`apply says what it does on ${backend.name}`, () => {
    let w: World;
    let tg: Gateway;
    let alice = '';
    const apply = (docs: unknown[], query: string, token = alice) =>
      w.send('POST', `/v1/apply?${query}`, docs, token);

    before(async () => {
      w = await openAdminWorld(backend);
      tg = w.tg;
      const first = await apply([operator('alice', ['admin'])], 'set=people', ADMIN_TOKEN);
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
    });
    after(async () => {
      await w?.close();
    });

    test('Y2: one object declared twice in one file is refused whole, naming both documents; nothing is applied', async () => {
      const hook = (n: number) => `https://hooks.test/services/T0/B0/twice-${n}`;
      const cases: [string, unknown[]][] = [
        ['operator zed', [operator('zed', ['owner']), operator('zed', ['admin'])]],
        ['owner channel payments/a', [channel('a', hook(1)), channel('a', hook(2))]],
        ['destination set dsz', [dset('dsz', ['a@x.example']), dset('dsz')]],
        [
          'tool twice_tool@1.0.0',
          [tool('twice_tool', 'Look up one thing.'), tool('twice_tool', 'Look up another thing.')],
        ],
        ['agent twice-agent', [agent('twice-agent'), agent('twice-agent', 'team-b')]],
        ['user twice-user', [user('twice-user'), user('twice-user', ['billing:write'])]],
        ['policy twice-policy', [policy('twice-policy', 100), policy('twice-policy', 200)]],
        [
          'grant g-agent billing:read',
          [
            agent('g-agent'),
            grant('g-agent', ['billing:read']),
            grant('g-agent', ['billing:read']),
          ],
        ],
      ];
      for (const [subject, docs] of cases) {
        // Something between the two, so the pointers are not simply neighbours.
        const file = [...docs.slice(0, -1), dset('between'), ...docs.slice(-1)];
        const [first, second] = [docs.length - 2, docs.length];
        for (const query of ['set=twice&dry_run=true', 'set=twice']) {
          const was = await written(tg);
          const r = await apply(file, query);
          assert.equal(r.status, 422, `${subject}: ${r.text}`);
          assert.equal(r.body.code, 'CONFIG_INVALID');
          const twice = problemsOf(r).filter((p) => p.rule === 'config.declared_twice');
          assert.equal(twice.length, 1, `${subject}: ${r.text}`);
          assert.equal(twice[0]?.pointer, `/${second}`);
          assert.match(twice[0]?.message ?? '', new RegExp(`^${subject} is declared twice`));
          assert.match(twice[0]?.message ?? '', new RegExp(`/${first} and /${second}`));
          assert.deepEqual(await written(tg), was, `${subject}: nothing is written`);
        }
      }
      // The benign neighbour: one document per object applies, then is unchanged; one agent's
      // grants spread over two documents (other capabilities) are not the same object.
      const once = [
        operator('zed', ['owner']),
        channel('a', hook(1)),
        dset('dsz', ['a@x.example']),
        agent('g-agent'),
        grant('g-agent', ['billing:read']),
        grant('g-agent', ['billing:write']),
      ];
      const applied = await apply(once, 'set=twice');
      assert.equal(applied.status, 200, applied.text);
      assert.deepEqual(
        changesOf(applied).map((c) => c.action),
        ['create', 'create', 'create', 'create', 'create', 'create'],
      );
      assert.ok(!changesOf(applied).some((c) => /adopted/.test(c.summary)), applied.text);
      const again = await apply(once, 'set=twice');
      assert.deepEqual(
        changesOf(again).map((c) => c.action),
        ['unchanged', 'unchanged', 'unchanged', 'unchanged', 'unchanged', 'unchanged'],
      );
    });

    test('Y7: the demo seed reviewer’s id is reserved: no account takes it by a file, REST or the library', async () => {
      const was = await written(tg);
      const byFile = await apply([operator('demo-seed', ['admin'])], 'set=seed');
      assert.equal(byFile.status, 422, byFile.text);
      assert.match(problemsOf(byFile)[0]?.message ?? '', /operator id demo-seed is reserved/);
      const byRest = await w.send('POST', '/v1/operators', { id: 'demo-seed', roles: ['auditor'] });
      assert.equal(byRest.status, 400, byRest.text);
      assert.match(String(byRest.body.message), /reserved/);
      await assert.rejects(
        tg.operators.create(BOOTSTRAP_OPERATOR, { id: 'demo-seed', roles: ['auditor'] }),
        /reserved/,
      );
      assert.deepEqual(await written(tg), was);
      // The benign neighbours: ids that only look like it are anyone's.
      const near = await apply(
        [operator('demo-seeds', ['auditor']), operator('seed', ['auditor'])],
        'set=seed',
      );
      assert.equal(near.status, 200, near.text);
    });

    test('Y3: what a rule keeps is never promised to --prune, never marked pruned, and the dry run says what the apply says', async () => {
      // Set `keep` declares dsx (named by a live tool's rule), a plain set, and carl; set `also`
      // declares carl too.
      const declared = [
        dset('dsx', ['bea@partner.example']),
        dset('plain'),
        reader('mailer', 'dsx'),
        operator('carl', ['auditor']),
      ];
      assert.equal((await apply(declared, 'set=keep')).status, 200);
      assert.equal((await apply([operator('carl', ['auditor'])], 'set=also')).status, 200);
      const narrower = [reader('mailer', 'dsx')];

      // Without --prune: each says what a prune would do to it.
      const plan = await apply(narrower, 'set=keep&dry_run=true');
      const drift = await apply(narrower, 'set=keep');
      for (const r of [plan, drift]) {
        assert.equal(r.status, 200, r.text);
        const by = new Map(changesOf(r).map((c) => [c.subject, c]));
        const dsx = by.get('destination set dsx');
        assert.equal(dsx?.action, 'drift');
        assert.equal(dsx?.prunable, false);
        assert.doesNotMatch(dsx?.summary ?? '', /apply with --prune to delete it/);
        assert.match(dsx?.summary ?? '', /still named by tool mailer@1\.0\.0/);
        assert.match(dsx?.summary ?? '', /--prune keeps it/);
        const carl = by.get('operator carl');
        assert.equal(carl?.action, 'drift');
        assert.equal(carl?.prunable, false);
        assert.match(carl?.summary ?? '', /set also still declares it/);
        assert.doesNotMatch(carl?.summary ?? '', /apply with --prune to/);
        // The benign neighbour: what a prune would remove says so.
        const plain = by.get('destination set plain');
        assert.equal(plain?.action, 'drift');
        assert.equal(plain?.prunable, true);
        assert.match(plain?.summary ?? '', /apply with --prune to delete it/);
      }
      assert.deepEqual(changesOf(plan), changesOf(drift), 'the dry run is the apply');

      // With --prune: what is kept is drift, not a prune, and says no more "apply with --prune".
      const pruneDry = await apply(narrower, 'set=keep&prune=true&dry_run=true');
      const pruned = await apply(narrower, 'set=keep&prune=true');
      for (const r of [pruneDry, pruned]) {
        assert.equal(r.status, 200, r.text);
        const by = new Map(changesOf(r).map((c) => [c.subject, c]));
        for (const kept of ['destination set dsx', 'operator carl']) {
          assert.equal(by.get(kept)?.action, 'drift', `${kept}: ${r.text}`);
          assert.equal(by.get(kept)?.prunable, false);
          assert.doesNotMatch(by.get(kept)?.summary ?? '', /apply with --prune/);
        }
        assert.equal(by.get('destination set plain')?.action, 'prune');
      }
      assert.deepEqual(changesOf(pruneDry), changesOf(pruned), 'the dry run is the apply');
      assert.deepEqual(
        changesOf(pruned)
          .filter((c) => c.action !== 'unchanged' && c.action !== 'drift')
          .map((c) => c.subject),
        ['destination set plain'],
        'only the real change counts',
      );
      assert.equal((await tg.admin.operators.get('carl')).disabled, false);
      assert.ok((await tg.destinationSets.list()).some((s) => s.name === 'dsx'));

      // The last enabled admin, and the applier's own account: --prune keeps them, and the plan
      // without it says so.
      const self = await apply([dset('placeholder')], 'set=people&dry_run=true');
      const mine = changesOf(self).find((c) => c.subject === 'operator alice');
      assert.equal(mine?.action, 'drift', self.text);
      assert.equal(mine?.prunable, false);
      assert.doesNotMatch(mine?.summary ?? '', /apply with --prune to disable it/);
    });
  });
}
