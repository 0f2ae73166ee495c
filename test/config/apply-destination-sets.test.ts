/**
 * apply -f with `kind: DestinationSet` (docs/configuration.md "Configuration documents"): a set
 * is created and made what its document declares through the destination sets' own checks; the
 * same file twice changes nothing; a narrower file lists the set as drift, and `--prune` deletes
 * it, unless a live tool's rule still names it: then it is kept and the plan says which tool (a
 * rule naming a missing set refuses every call of its tool). A bad document refuses the whole
 * file and writes nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Actor, ToolgateError } from '../../src/core/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { validSendTool, validTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';

const admin: Actor = { id: 'cli:ds-admin', via: 'cli' };

const set = (name: string, spec: Record<string, unknown> = {}) => ({
  kind: 'DestinationSet',
  spec: { name, kind: 'email', ...spec },
});
/** A read tool (active once applied) whose `contact` rule names live set `setName`. */
const reader = (id: string, setName: string) => ({
  kind: 'Tool',
  spec: validTool({
    id,
    name: id,
    input_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['contact'],
      properties: { contact: { type: 'string', maxLength: 254 } },
    },
    destinations: [{ argument: '/contact', kind: 'email', allow: { sets: [setName] } }],
  }),
});
/** A sending tool (a draft until its security review) whose `to` rule names set `setName`. */
const sender = (id: string, setName: string) => ({
  kind: 'Tool',
  spec: validSendTool({
    id,
    name: id,
    destinations: [{ argument: '/to', kind: 'email', allow: { sets: [setName] } }],
  }),
});

async function state(tg: Gateway) {
  const sets = await tg.destinationSets.list();
  return {
    sets: await Promise.all(
      sets.map(
        async (s) =>
          `${s.name}:${s.description}:${(await tg.destinationSets.members(s.name)).join(',')}`,
      ),
    ),
    events: (await tg.events.list({ limit: 100_000 })).length,
  };
}

for (const backend of backends()) {
  describe(`apply DestinationSet on ${backend.name}`, () => {
    let world: World;
    let tg: Gateway;
    before(async () => {
      world = await openWorld({ backend });
      tg = world.tg;
    });
    after(async () => {
      await world.close();
    });

    const partners = set('partners', {
      description: 'partner inboxes',
      members: ['Bea@Partner.Example', 'carl@partner.example'],
    });

    test('a dry run is the plan and writes nothing', async () => {
      const was = await state(tg);
      const plan = await tg.config.apply([partners], admin, { set: 'ds', dryRun: true });
      assert.equal(plan.changes[0]?.action, 'create');
      assert.deepEqual(await state(tg), was);
    });

    test('create: members stored normalised, each change an event naming the actor', async () => {
      const r = await tg.config.apply([partners], admin, { set: 'ds' });
      assert.deepEqual(
        r.changes.map((c) => [c.subject, c.action, c.summary]),
        [['destination set partners', 'create', 'created (email, admin, 2 members)']],
      );
      assert.deepEqual(await tg.destinationSets.members('partners'), [
        'bea@partner.example',
        'carl@partner.example',
      ]);
      const events = (
        await tg.events.list({ subject: 'destination_set:partners', limit: 100 })
      ).map((e) => [e.action, e.actor]);
      assert.deepEqual(events, [
        ['destination_set.created', admin.id],
        ['destination_set.members_added', admin.id],
      ]);
    });

    test('the same file again changes nothing and writes nothing', async () => {
      const was = await state(tg);
      const r = await tg.config.apply([partners], admin, { set: 'ds' });
      assert.deepEqual(
        r.changes.map((c) => c.action),
        ['unchanged'],
      );
      assert.deepEqual(await state(tg), was);
    });

    test('update: description and members become what the document says', async () => {
      const r = await tg.config.apply(
        [
          set('partners', {
            description: 'partners, 2026',
            members: ['carl@partner.example', 'dora@partner.example'],
          }),
        ],
        admin,
        { set: 'ds' },
      );
      assert.equal(r.changes[0]?.action, 'update');
      assert.equal(r.changes[0]?.summary, 'updated: description, +1 members, -1 members');
      assert.deepEqual(await tg.destinationSets.members('partners'), [
        'carl@partner.example',
        'dora@partner.example',
      ]);
      assert.equal((await tg.destinationSets.get('partners')).description, 'partners, 2026');
    });

    test('a document without members leaves members added by hand alone', async () => {
      await tg.config.apply([set('by-hand')], admin, { set: 'ds2' });
      await tg.destinationSets.add('by-hand', ['eve@partner.example'], admin);
      const r = await tg.config.apply([set('by-hand')], admin, { set: 'ds2' });
      assert.equal(r.changes[0]?.action, 'unchanged');
      assert.deepEqual(await tg.destinationSets.members('by-hand'), ['eve@partner.example']);
    });

    test('bad documents refuse the whole file with pointers and write nothing', async () => {
      const was = await state(tg);
      const cases: [unknown[], string, string][] = [
        // A member that is not an e-mail address.
        [
          [
            { kind: 'Agent', spec: { id: 'ds-a', owner: 't' } },
            set('bad', { members: ['ok@x.example', 'not an address'] }),
          ],
          '/1/spec/members/1',
          'destination.malformed',
        ],
        // The kind of an existing set never changes.
        [[set('partners', { kind: 'phone' })], '/0/spec/kind', 'destination_set.kind_change'],
        // Members of a directory set come from its tool.
        [
          [
            set('dir', {
              directory: { tool: 'list_team', version: '1.0.0', members: '/m' },
              members: ['a@b.example'],
            }),
          ],
          '/0/spec/members',
          'destination_set.source',
        ],
        // A name the REST route would refuse.
        [[set('Bad Name')], '/0/spec/name', 'schema.pattern'],
      ];
      for (const [docs, pointer, rule] of cases) {
        await assert.rejects(tg.config.apply(docs, admin, { set: 'ds' }), (err: ToolgateError) => {
          assert.equal(err.code, 'CONFIG_INVALID');
          const problems = (err.details as { problems: { pointer: string; rule: string }[] })
            .problems;
          assert.ok(
            problems.some((p) => p.pointer === pointer && p.rule === rule),
            `${pointer} ${rule}: ${JSON.stringify(problems)}`,
          );
          return true;
        });
      }
      assert.deepEqual(await state(tg), was);
      await assert.rejects(tg.agents.get('ds-a'));
    });

    test('a set another set declares too says so; a one-off set is never pruned', async () => {
      const r = await tg.config.apply([partners], admin, { set: 'ds-other' });
      assert.match(r.changes[0]?.summary ?? '', /also declared by set ds/);
      await tg.config.apply([set('one-off')], admin, { set: null });
      const narrow = await tg.config.apply([set('unrelated')], admin, {
        set: 'ds-other',
        prune: true,
      });
      assert.ok(!narrow.changes.some((c) => c.subject === 'destination set one-off'));
      await tg.destinationSets.get('one-off');
      // partners was dropped by ds-other only: set ds still declares it, so it is kept.
      assert.match(
        narrow.changes.find((c) => c.subject === 'destination set partners')?.summary ?? '',
        /set ds still declares it/,
      );
      await tg.destinationSets.get('partners');
    });

    test('narrower files: drift without --prune; with it an unused set is deleted, a set a live tool names is kept as drift with the tool', async () => {
      const wide = [
        set('used', { members: ['a@used.example'] }),
        set('unused'),
        set('drafted'),
        reader('ds_read', 'used'),
        sender('ds_send', 'drafted'),
      ];
      const first = await tg.config.apply(wide, admin, { set: 'narrow' });
      assert.ok(
        first.changes.every((c) => c.action === 'create'),
        JSON.stringify(first.changes),
      );
      const lifecycle = async (id: string) =>
        (await tg.catalog.list()).find((t) => t.id === id)?.lifecycle;
      assert.equal(await lifecycle('ds_read'), 'active');
      assert.equal(await lifecycle('ds_send'), 'draft', 'awaiting its security review');
      const narrow = [reader('ds_read', 'used')];

      const was = await state(tg);
      const drift = await tg.config.apply(narrow, admin, { set: 'narrow' });
      assert.deepEqual(
        drift.changes
          .filter((c) => c.action === 'drift')
          .map((c) => c.subject)
          .sort(),
        [
          'destination set drafted',
          'destination set unused',
          'destination set used',
          'tool ds_send@1.0.0',
        ],
      );
      assert.deepEqual(await state(tg), was, 'drift changes nothing');

      const pruned = await tg.config.apply(narrow, admin, { set: 'narrow', prune: true });
      const of = (s: string) => pruned.changes.find((c) => c.subject === s);
      assert.equal(of('destination set unused')?.action, 'prune');
      assert.equal(of('destination set unused')?.summary, 'deleted (0 members)');
      // The draft that named `drafted` is retired by the same prune, before the sets are looked at.
      assert.equal(of('tool ds_send@1.0.0')?.summary, 'retired (was draft)');
      assert.equal(of('destination set drafted')?.action, 'prune');
      assert.equal(of('destination set used')?.action, 'drift');
      assert.match(
        of('destination set used')?.summary ?? '',
        /^no longer declared: kept, still named by tool ds_read@1\.0\.0 /,
      );
      for (const gone of ['unused', 'drafted']) {
        await assert.rejects(
          tg.destinationSets.get(gone),
          (e: ToolgateError) => e.code === 'DESTINATION_SET_NOT_FOUND',
        );
      }
      assert.deepEqual(await tg.destinationSets.members('used'), ['a@used.example']);
      const deleted = await tg.events.list({ subject: 'destination_set:unused', limit: 100 });
      assert.ok(
        deleted.some((e) => e.action === 'destination_set.deleted' && e.actor === admin.id),
      );

      // Kept, it is reported again on every apply while a version that can run names it: a
      // deprecated one still runs until its window ends.
      const last = await tg.config.apply([set('other-thing')], admin, {
        set: 'narrow',
        prune: true,
      });
      assert.equal(await lifecycle('ds_read'), 'deprecated');
      assert.equal(last.changes.find((c) => c.subject === 'destination set used')?.action, 'drift');
      await tg.destinationSets.get('used');
    });
  });
}
