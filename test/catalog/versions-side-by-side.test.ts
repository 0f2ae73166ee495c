/**
 * Versions side by side (C2) on every backend: one offered version per major, a session holding
 * the default and the pinnable majors, a pinned call through the gate, and the window extension
 * (audited, refused whole when it cannot apply).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { validTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';
import { refusal } from './refusal.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const DAY = 86_400_000;

/** lookup_invoice with a new required field: a breaking change, so 2.0.0. */
const RUNTIME = { kind: 'inline', handler: 't.echo' };
const V1 = validTool({ runtime: RUNTIME });
const V2 = validTool({
  version: '2.0.0',
  runtime: RUNTIME,
  input_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['invoice', 'currency'],
    properties: { invoice: { type: 'string', maxLength: 40 }, currency: { enum: ['EUR', 'USD'] } },
  },
});

for (const backend of backends()) {
  describe(`versions side by side on ${backend.name}`, () => {
    let tg: Gateway;
    let world: World;
    let now = new Date('2026-01-01T00:00:00Z');

    before(async () => {
      world = await openWorld({
        backend,
        options: {
          clock: () => now,
          executor: demoExecutor().register('t.echo', () => ({ status: 'ok' })),
        },
      });
      tg = world.tg;
      await tg.catalog.register(V1, admin);
      await tg.catalog.register({ ...V1, version: '1.1.0' }, admin);
      await tg.catalog.register(V2, admin);
      await tg.catalog.deprecate('lookup_invoice', '1.1.0', admin, { windowDays: 10 });
      await tg.config.apply(
        [
          { kind: 'Agent', spec: { id: 'bot', owner: 'billing-team' } },
          { kind: 'Grant', spec: { agent: 'bot', capabilities: ['billing:read'] } },
        ],
        admin,
      );
    });
    after(async () => {
      await world.close();
    });

    test('offeredMajors keeps the newest offerable version of each major; offered keeps one per tool', async () => {
      assert.deepEqual(
        (await tg.catalog.offeredMajors()).map((t) => `${t.id}@${t.version}:${t.lifecycle}`),
        ['lookup_invoice@1.1.0:deprecated', 'lookup_invoice@2.0.0:active'],
      );
      assert.deepEqual(
        (await tg.catalog.offered()).map((t) => t.version),
        ['2.0.0'],
      );
    });

    test('a session defaults to 2.0.0 and pins 1.1.0; the gate runs each under its own schema', async () => {
      const s = await tg.sessions.open('bot');
      assert.deepEqual(s.tools, [
        {
          id: 'lookup_invoice',
          version: '2.0.0',
          name: 'lookup_invoice',
          pins: [{ major: 1, version: '1.1.0' }],
        },
      ]);
      const ctx = { agentId: 'bot', sessionId: s.id };
      const old = await tg.gate.invoke(ctx, 'lookup_invoice@1', { invoice: 'I-1' });
      assert.equal(old.kind, 'allow', JSON.stringify(old));
      assert.equal(old.kind === 'allow' && old.version, '1.1.0');
      assert.equal(old.kind === 'allow' && old.deprecation?.successor, '2.0.0');
      const unpinned = await tg.gate.invoke(ctx, 'lookup_invoice', { invoice: 'I-1' });
      assert.equal(unpinned.kind === 'deny' && unpinned.code, 'INPUT_INVALID');
    });

    test('extending a window moves retire_at by whole days and records it; it bumps the catalog revision', async () => {
      const before = await tg.catalog.get('lookup_invoice', '1.1.0');
      const revision = await tg.catalog.revision();
      const after = await tg.catalog.extendDeprecation('lookup_invoice', '1.1.0', admin, {
        days: 7,
        reason: 'two agents left',
      });
      assert.equal(Date.parse(after.retire_at ?? '') - Date.parse(before.retire_at ?? ''), 7 * DAY);
      assert.equal(after.lifecycle, 'deprecated');
      assert.ok((await tg.catalog.revision()) > revision);
      const events = await tg.events.list({ subject: 'tool:lookup_invoice@1.1.0', limit: 20 });
      const extended = events.find((e) => e.action === 'tool.deprecation_extended');
      assert.equal(extended?.actor, 'test-admin');
      assert.deepEqual(JSON.parse(extended?.details ?? '{}'), {
        from_retire_at: before.retire_at,
        retire_at: after.retire_at,
        days: 7,
        reason: 'two agents left',
      });
    });

    test('an extension that cannot apply is refused whole and changes nothing', async () => {
      const before = await tg.catalog.get('lookup_invoice', '1.1.0');
      const events = (await tg.events.list({ limit: 10_000 })).length;
      for (const days of [0, -1, 2.5, Number.NaN, 3651]) {
        const err = await refusal(
          tg.catalog.extendDeprecation('lookup_invoice', '1.1.0', admin, { days }),
        );
        assert.equal(err.code, 'INPUT_INVALID', String(days));
      }
      // Past the longest window from now.
      assert.equal(
        (
          await refusal(
            tg.catalog.extendDeprecation('lookup_invoice', '1.1.0', admin, { days: 3650 }),
          )
        ).code,
        'INPUT_INVALID',
      );
      assert.equal(
        (await refusal(tg.catalog.extendDeprecation('lookup_invoice', '2.0.0', admin, { days: 1 })))
          .code,
        'LIFECYCLE_INVALID',
      );
      assert.equal(
        (await refusal(tg.catalog.extendDeprecation('lookup_invoice', '9.0.0', admin, { days: 1 })))
          .code,
        'TOOL_NOT_FOUND',
      );
      assert.equal((await tg.catalog.get('lookup_invoice', '1.1.0')).retire_at, before.retire_at);
      assert.equal((await tg.events.list({ limit: 10_000 })).length, events);
    });

    test('once the window ends the major is no longer offered, and cannot be extended', async () => {
      const retireAt = (await tg.catalog.get('lookup_invoice', '1.1.0')).retire_at ?? '';
      now = new Date(Date.parse(retireAt) + 1);
      assert.deepEqual(
        (await tg.catalog.offeredMajors()).map((t) => t.version),
        ['1.0.0', '2.0.0'],
        'the newest offerable version of major 1 is now 1.0.0, still active (as offered() would fall back)',
      );
      assert.equal(
        (await refusal(tg.catalog.extendDeprecation('lookup_invoice', '1.1.0', admin, { days: 1 })))
          .code,
        'LIFECYCLE_INVALID',
      );
    });
  });
}
