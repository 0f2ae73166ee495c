/**
 * Organisation policies through the whole path: applied as configuration (kind Policy), validated
 * as a set, enforced by the gate with a forbid that always wins.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Actor, ToolgateError } from '../../src/core/index.js';
import { demoExecutor } from '../../src/gate/index.js';
import { openToolgate, type Toolgate } from '../../src/toolgate.js';
import { backends } from '../support/backends.js';
import { validTool } from '../support/fixtures.js';

const admin: Actor = { id: 'policy-admin', via: 'library' };
let tg: Toolgate;
let drop: () => Promise<void>;

before(async () => {
  const sqlite = backends().find((b) => b.name === 'sqlite');
  assert.ok(sqlite);
  const fresh = await sqlite.fresh();
  drop = fresh.drop;
  tg = await openToolgate({
    db: fresh.url,
    executor: demoExecutor().register('t.echo', () => ({ status: 'ok' })),
  });
  await tg.config.apply(
    [
      { kind: 'Agent', spec: { id: 'bot', owner: 'qa' } },
      {
        kind: 'Tool',
        spec: validTool({
          id: 'lookup',
          name: 'lookup',
          runtime: { kind: 'inline', handler: 't.echo' },
        }),
      },
      {
        kind: 'Tool',
        spec: validTool({
          id: 'other',
          name: 'other',
          runtime: { kind: 'inline', handler: 't.echo' },
        }),
      },
      { kind: 'Grant', spec: { agent: 'bot', capabilities: ['billing:read'] } },
    ],
    admin,
  );
});
after(async () => {
  await tg.close();
  await drop();
});

test('a forbid on one argument value denies that call and allows its neighbours', async () => {
  await tg.config.apply(
    [
      {
        kind: 'Policy',
        spec: {
          id: 'no-usd-lookups',
          text: `@id("no-usd") @reason("USD invoices are handled by finance")
forbid (principal, action, resource == Toolgate::Tool::"lookup")
when { context.arguments.hasTag("currency") && context.arguments.getTag("currency") == "USD" };`,
        },
      },
    ],
    admin,
  );
  const s = await tg.sessions.open('bot');
  const ctx = { agentId: 'bot', sessionId: s.id };
  const denied = await tg.gate.invoke(ctx, 'lookup', { invoice: 'I-1', currency: 'USD' });
  assert.equal(denied.kind, 'deny');
  assert.equal(denied.kind === 'deny' ? denied.rule : '', 'cedar.no-usd');
  assert.equal(denied.kind === 'deny' ? denied.message : '', 'USD invoices are handled by finance');
  assert.equal(
    (await tg.gate.invoke(ctx, 'lookup', { invoice: 'I-1', currency: 'EUR' })).kind,
    'allow',
  );
  assert.equal(
    (await tg.gate.invoke(ctx, 'other', { invoice: 'I-1', currency: 'USD' })).kind,
    'allow',
  );
});

test("an author's permit cannot override a forbid", async () => {
  await tg.config.apply(
    [{ kind: 'Policy', spec: { id: 'permit-all', text: 'permit (principal, action, resource);' } }],
    admin,
  );
  const s = await tg.sessions.open('bot');
  const denied = await tg.gate.invoke({ agentId: 'bot', sessionId: s.id }, 'lookup', {
    invoice: 'I-1',
    currency: 'USD',
  });
  assert.equal(denied.kind, 'deny');
});

test('a policy that does not validate against the schema is refused and nothing changes', async () => {
  await assert.rejects(
    tg.config.apply(
      [
        {
          kind: 'Policy',
          spec: {
            id: 'typo',
            text: 'forbid (principal, action, resource) when { resource.colour == "red" };',
          },
        },
      ],
      admin,
    ),
    (e: ToolgateError) => e.code === 'CONFIG_INVALID' && /colour/.test(JSON.stringify(e.details)),
  );
  await assert.rejects(
    tg.config.apply(
      [{ kind: 'Policy', spec: { id: 'broken', text: 'forbid (principal, action' } }],
      admin,
    ),
    { code: 'CONFIG_INVALID' },
  );
  const s = await tg.sessions.open('bot');
  assert.equal(
    (await tg.gate.invoke({ agentId: 'bot', sessionId: s.id }, 'other', { invoice: 'I-2' })).kind,
    'allow',
  );
});
