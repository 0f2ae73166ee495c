/** apply -f: parsing, whole-file refusal, dry runs, idempotency, on every backend. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import type { Actor, ToolgateError } from '../../src/core/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { parseConfigText } from '../../src/operations/config/index.js';
import { backends } from '../support/backends.js';
import { validTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';

const admin: Actor = { id: 'cli:test', via: 'cli' };
const demo = readFileSync(new URL('../../demo/catalog.yaml', import.meta.url), 'utf8');

function refusedWith(fn: () => unknown, code: string): ToolgateError {
  try {
    fn();
  } catch (err) {
    assert.equal((err as ToolgateError).code, code);
    return err as ToolgateError;
  }
  assert.fail(`expected ${code}`);
}

describe('parsing configuration text', () => {
  test('YAML with several documents, a JSON object and a JSON array all parse', () => {
    assert.equal(parseConfigText('kind: Agent\n---\nkind: Grant\n').length, 2);
    assert.equal(parseConfigText('{"kind":"Agent"}').length, 1);
    assert.equal(parseConfigText('[{"kind":"Agent"},{"kind":"Tool"}]').length, 2);
  });

  test('malformed YAML and JSON are INPUT_MALFORMED', () => {
    refusedWith(() => parseConfigText('kind: [unclosed'), 'INPUT_MALFORMED');
    refusedWith(() => parseConfigText('{"kind": "Agent",}x'), 'INPUT_MALFORMED');
  });

  test('duplicate keys are refused, not silently overwritten', () => {
    refusedWith(() => parseConfigText('kind: Tool\nkind: Agent\n'), 'INPUT_MALFORMED');
  });

  test('alias bombs are refused', () => {
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 0; i < 8; i++) {
      const prev = String.fromCharCode(97 + i);
      const next = String.fromCharCode(98 + i);
      bomb.push(
        `${next}: &${next} [*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev}]`,
      );
    }
    refusedWith(() => parseConfigText(bomb.join('\n')), 'INPUT_MALFORMED');
  });

  test('YAML 1.1 booleans stay strings (no "no" → false surprises)', () => {
    assert.deepEqual(parseConfigText('country: no\n'), [{ country: 'no' }]);
  });
});

for (const backend of backends()) {
  describe(`apply on ${backend.name}`, () => {
    let tg: Gateway;
    let world: World;

    before(async () => {
      world = await openWorld({ backend });
      tg = world.tg;
    });
    after(async () => {
      await world.close();
    });

    async function snapshot() {
      return {
        tools: (await tg.catalog.list()).map((t) => `${t.id}@${t.version}:${t.lifecycle}`),
        agents: (await tg.agents.list()).map((a) => `${a.id}:${a.capabilities.join(',')}`),
        events: (await tg.events.list({ limit: 100_000 })).length,
      };
    }

    test('a dry run returns the plan and writes nothing', async () => {
      const before = await snapshot();
      const plan = await tg.config.applyText(demo, admin, { dryRun: true });
      assert.equal(plan.dryRun, true);
      assert.equal(
        plan.changes.filter((c) => c.kind === 'Tool' && c.action === 'create').length,
        10,
      );
      assert.deepEqual(await snapshot(), before);
    });

    test('an actor that is not { id, via } is INPUT_INVALID and writes nothing; a real one applies', async () => {
      const before = await snapshot();
      for (const bad of ['lib-test', null, { id: '', via: 'library' }, { id: 'x', via: 'mcp' }]) {
        await assert.rejects(
          tg.admin.config.applyText(demo, bad as unknown as Actor),
          (err: ToolgateError) => err.code === 'INPUT_INVALID' && /actor/.test(err.message),
          JSON.stringify(bad),
        );
      }
      assert.deepEqual(await snapshot(), before);
      const plan = await tg.admin.config.applyText(
        demo,
        { id: 'library:ops', via: 'library' },
        {
          dryRun: true,
        },
      );
      assert.equal(plan.dryRun, true);
    });

    test('the demo catalog applies, and applying it again changes nothing', async () => {
      const first = await tg.config.applyText(demo, admin);
      assert.equal(first.changes.filter((c) => c.action === 'create').length, first.changes.length);
      const classes = new Set((await tg.catalog.list()).map((t) => t.action_class));
      assert.deepEqual([...classes].sort(), [
        'external_send',
        'irreversible',
        'permission_change',
        'read',
        'reversible_write',
      ]);
      assert.ok(
        (await tg.catalog.list()).every((t) => !t.quarantined),
        'demo tools are clean',
      );
      const before = await snapshot();
      const second = await tg.config.applyText(demo, admin);
      assert.ok(second.changes.every((c) => c.action === 'unchanged'));
      assert.deepEqual(await snapshot(), before);
    });

    test('one invalid document refuses the whole file and nothing of the valid ones is written', async () => {
      const before = await snapshot();
      const text = [
        { kind: 'Agent', spec: { id: 'new-agent', owner: 'team-a' } },
        { kind: 'Tool', spec: validTool({ id: 'fine_tool', name: 'fine_tool' }) },
        { kind: 'Tool', spec: validTool({ id: 'bad_tool', name: 'bad_tool', version: 'one' }) },
        { kind: 'Grant', spec: { agent: 'new-agent', capabilities: ['billing:read'] } },
        { kind: 'Gadget', spec: {} },
      ]
        .map((d) => stringify(d))
        .join('---\n');
      let err: ToolgateError | undefined;
      try {
        await tg.config.applyText(text, admin);
      } catch (e) {
        err = e as ToolgateError;
      }
      assert.ok(err);
      assert.equal(err.code, 'CONFIG_INVALID');
      const problems = (err.details as { problems: { document: number; pointer: string }[] })
        .problems;
      assert.ok(problems.some((p) => p.document === 2 && p.pointer === '/2/spec/version'));
      assert.ok(problems.some((p) => p.document === 4 && p.pointer === '/4/kind'));
      assert.deepEqual(await snapshot(), before);
    });

    test('a refusal found during the transaction (breaking change) also rolls back the valid documents', async () => {
      const before = await snapshot();
      const orderV1 = await tg.catalog.get('get_order', '1.0.0');
      const input = orderV1.definition.input_schema as Record<string, unknown>;
      const docs = [
        { kind: 'Agent', spec: { id: 'rollback-agent', owner: 'team-a' } },
        {
          kind: 'Tool',
          spec: {
            ...orderV1.definition,
            version: '1.1.0',
            input_schema: {
              ...input,
              required: ['order_id', 'reason'],
              properties: { ...(input.properties as object), reason: { type: 'string' } },
            },
          },
        },
      ];
      await assert.rejects(tg.config.apply(docs, admin), (e: ToolgateError) => {
        assert.equal(e.code, 'CONFIG_INVALID');
        assert.match(e.message, /breaks the contract/);
        return true;
      });
      assert.deepEqual(await snapshot(), before);
    });

    test('versions in one file are registered oldest first and checked against each other', async () => {
      const v1 = validTool({ id: 'multi_version', name: 'multi_version' });
      const v2 = {
        ...v1,
        version: '2.0.0',
        input_schema: { type: 'object', additionalProperties: false, properties: {} },
      };
      const result = await tg.config.apply(
        [
          { kind: 'Tool', spec: v2 },
          { kind: 'Tool', spec: v1 },
        ],
        admin,
      );
      assert.deepEqual(
        result.changes.filter((c) => c.action !== 'drift').map((c) => c.subject),
        ['tool multi_version@2.0.0', 'tool multi_version@1.0.0'],
      );
      assert.equal((await tg.catalog.versions('multi_version')).length, 2);
    });

    test('a grant for an unknown agent is refused with its pointer', async () => {
      await assert.rejects(
        tg.config.apply(
          [{ kind: 'Grant', spec: { agent: 'ghost', capabilities: ['x:y'] } }],
          admin,
        ),
        (e: ToolgateError) => {
          const problems = (e.details as { problems: { pointer: string }[] }).problems;
          return e.code === 'CONFIG_INVALID' && problems.some((p) => p.pointer === '/0/spec/agent');
        },
      );
    });

    test('without --prune a narrower grant removes nothing (it is listed as drift), and agents update in place', async () => {
      const res = await tg.config.apply(
        [
          {
            kind: 'Agent',
            spec: { id: 'support-bot', owner: 'support-team', display_name: 'Support v2' },
          },
          { kind: 'Grant', spec: { agent: 'support-bot', capabilities: ['orders:read'] } },
        ],
        admin,
      );
      assert.deepEqual(
        res.changes.filter((c) => c.action !== 'drift').map((c) => c.action),
        ['update', 'unchanged'],
      );
      assert.ok(
        res.changes.some(
          (c) => c.action === 'drift' && c.subject === 'grant support-bot email:send',
        ),
      );
      const agent = await tg.agents.get('support-bot');
      assert.equal(agent.display_name, 'Support v2');
      assert.ok(agent.capabilities.includes('email:send'));
    });

    test('a document nested thousands of levels deep is refused as a problem, not a crash', async () => {
      let deep: unknown = 'x';
      for (let i = 0; i < 20_000; i++) deep = { a: deep };
      await assert.rejects(
        tg.config.apply([{ kind: 'Agent', spec: { id: 'deep', owner: 'x', extra: deep } }], admin),
        (e: ToolgateError) =>
          e.code === 'CONFIG_INVALID' &&
          (e.details as { problems: { rule: string }[] }).problems.some((p) => p.rule === 'depth'),
      );
    });

    test('reserved kinds and empty files are refused', async () => {
      await assert.rejects(tg.config.apply([{ kind: 'Secret', spec: {} }], admin), /reserved/);
      await assert.rejects(tg.config.applyText('# nothing\n', admin), { code: 'CONFIG_INVALID' });
    });
  });
}
