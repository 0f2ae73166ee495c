/**
 * Organisation policies through the whole path: applied as configuration (kind Policy), validated
 * as a set, enforced by the gate with a forbid that always wins.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Actor, ToolgateError } from '../../src/core/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { validTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';

const admin: Actor = { id: 'policy-admin', via: 'library' };
let tg: Gateway;
let world: World;

before(async () => {
  world = await openWorld({
    options: { executor: demoExecutor().register('t.echo', () => ({ status: 'ok' })) },
  });
  tg = world.tg;
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
  await world.close();
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

test('a numeric forbid on amount > 100 stops 100.5 and 1,000,000.5: refused as inexact (Long) or compared exactly (decimal)', async () => {
  const amountTool = (id: string) =>
    validTool({
      id,
      name: id,
      input_schema: {
        type: 'object',
        additionalProperties: false,
        required: ['amount'],
        properties: { amount: { type: 'number' } },
      },
      runtime: { kind: 'inline', handler: 't.echo' },
    });
  await tg.config.apply(
    [
      { kind: 'Tool', spec: amountTool('pay_long') },
      { kind: 'Tool', spec: amountTool('pay_decimal') },
      {
        kind: 'Policy',
        spec: {
          id: 'amount-caps',
          text: `@id("long-cap") forbid (principal, action, resource == Toolgate::Tool::"pay_long")
when { context.numeric_arguments.hasTag("amount") && context.numeric_arguments.getTag("amount") > 100 };
@id("decimal-cap") forbid (principal, action, resource == Toolgate::Tool::"pay_decimal")
when { context.decimal_arguments.hasTag("amount") && context.decimal_arguments.getTag("amount").greaterThan(decimal("100.0")) };`,
        },
      },
    ],
    admin,
  );
  const s = await tg.sessions.open('bot');
  const ctx = { agentId: 'bot', sessionId: s.id };
  const rule = async (tool: string, amount: number) => {
    const d = await tg.gate.invoke(ctx, tool, { amount });
    return d.kind === 'deny' ? d.rule : d.kind;
  };
  for (const amount of [100.5, 1_000_000.5]) {
    assert.equal(await rule('pay_long', amount), 'cedar.number_inexact');
    assert.equal(await rule('pay_decimal', amount), 'cedar.decimal-cap');
  }
  assert.equal(await rule('pay_long', 101), 'cedar.long-cap');
  assert.equal(await rule('pay_long', 100), 'allow');
  assert.equal(await rule('pay_decimal', 99.99), 'allow');
  assert.equal(await rule('pay_decimal', 100.00001), 'cedar.number_inexact');
});
