/**
 * Spend is charged and ceilings hold across sessions and runs, on
 * every backend: a tool's declared cost is charged to the session's spend budget before it runs,
 * exactly and atomically (concurrent calls, also through a second gateway on the same database,
 * never over-spend); rolling-window ceilings per agent and per (agent, user) are kept in the
 * database, so opening new sessions or choosing new run ids resets nothing; and a private-data
 * read keeps unconstrained egress refused for the same (agent, user) across sessions.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { admitCall, chargeEgress } from '../../src/domain/limits/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { GateDecision } from '../../src/gate/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { operator } from '../support/operators.js';
import { approvePendingReviews } from '../support/reviews.js';
import { validSendTool, validTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
/** The operator account that decides approvals here. */
const approver = operator('test-admin');

function ruleOf(d: GateDecision): string {
  return d.kind === 'deny' ? `${d.code} ${d.rule}` : d.kind;
}

const tool = (spec: Parameters<typeof validTool>[0]) => ({ kind: 'Tool', spec: validTool(spec) });
const sendTool = (spec: Parameters<typeof validSendTool>[0]) => ({
  kind: 'Tool',
  spec: validSendTool(spec),
});

const amountSchema = (name: string, type: 'number' | 'integer') => ({
  type: 'object',
  additionalProperties: false,
  required: [name],
  properties: { [name]: { type, minimum: 0 }, memo: { type: 'string', maxLength: 40 } },
});

/** A payment tool under `pay:send` whose cost is its `argument` (of `type`) in `unit`. */
const payTool = (id: string, argument: string, type: 'number' | 'integer', unit: string) =>
  tool({
    id,
    name: id,
    action_class: 'reversible_write',
    data_access: 'none',
    required_capabilities: ['pay:send'],
    input_schema: amountSchema(argument, type),
    cost: { argument, unit },
    runtime: { kind: 'inline', handler: 't.pay' },
  });

/** A tool run by the `t.read` handler under `capability`; `extra` adds to its definition. */
const readTool = (id: string, dataAccess: string, capability: string, extra = {}) =>
  tool({
    id,
    name: id,
    data_access: dataAccess,
    required_capabilities: [capability],
    ...extra,
    runtime: { kind: 'inline', handler: 't.read' },
  });

for (const backend of backends()) {
  describe(`spend and ceilings on ${backend.name}`, () => {
    let tg: Gateway;
    let world: World;
    let replica: Gateway;
    let inspector: Store;
    let now = new Date('2026-06-01T10:00:00Z');

    before(async () => {
      const executor = () =>
        demoExecutor()
          .register('t.pay', () => ({ status: 'paid' }))
          .register('t.read', () => ({ status: 'read' }))
          .register('t.post', () => ({ id: 'posted' }));
      world = await openWorld({ backend, options: { clock: () => now, executor: executor() } });
      tg = world.tg;
      inspector = await openStore(world.db);
      await tg.config.apply(
        [
          payTool('pay', 'amount', 'number', 'major'),
          payTool('pay_cents', 'cents', 'integer', 'cents'),
          readTool('quote', 'none', 'pay:send', { cost: { fixed_cents: 25 } }),
          readTool('lookup', 'none', 'pay:send'),
          readTool('read_private', 'private', 'billing:read'),
          sendTool({
            id: 'notify',
            name: 'notify',
            required_capabilities: ['notify:send'],
            runtime: { kind: 'inline', handler: 't.post' },
          }),
          sendTool({
            id: 'post_anywhere',
            name: 'post_anywhere',
            description: 'Post a message to any address.',
            egress: { mode: 'unconstrained' },
            required_capabilities: ['web:post'],
            runtime: { kind: 'inline', handler: 't.post' },
            input_schema: {
              type: 'object',
              additionalProperties: false,
              required: ['text'],
              properties: { text: { type: 'string', maxLength: 100 } },
            },
          }),
          { kind: 'Agent', spec: { id: 'payer', owner: 'qa', budgets: { spend_cents: 100_000 } } },
          { kind: 'Grant', spec: { agent: 'payer', capabilities: ['pay:send'] } },
          {
            kind: 'Agent',
            spec: {
              id: 'capped',
              owner: 'qa',
              budgets: { spend_cents: 800 },
              ceilings: {
                windows: [
                  { scope: 'agent', window_seconds: 3600, calls_per_tool: 6, spend_cents: 1000 },
                  { scope: 'agent_user', window_seconds: 3600, calls_per_tool: 3 },
                ],
              },
            },
          },
          { kind: 'Grant', spec: { agent: 'capped', capabilities: ['pay:send'] } },
          {
            kind: 'Agent',
            spec: {
              id: 'wide',
              owner: 'qa',
              ceilings: {
                windows: [{ scope: 'agent', window_seconds: 86_400, spend_cents: 1000 }],
              },
            },
          },
          { kind: 'Grant', spec: { agent: 'wide', capabilities: ['pay:send'] } },
          {
            kind: 'Agent',
            spec: {
              id: 'sender',
              owner: 'qa',
              budgets: { external_sends: 5 },
              ceilings: {
                windows: [{ scope: 'agent_user', window_seconds: 3600, external_sends: 2 }],
              },
            },
          },
          { kind: 'Grant', spec: { agent: 'sender', capabilities: ['notify:send'] } },
          { kind: 'Agent', spec: { id: 'mixer', owner: 'qa' } },
          { kind: 'Grant', spec: { agent: 'mixer', capabilities: ['billing:read', 'web:post'] } },
          {
            kind: 'User',
            spec: { id: 'ana@example.com', permissions: ['pay:send', 'notify:send'] },
          },
          {
            kind: 'User',
            spec: { id: 'ben@example.com', permissions: ['pay:send', 'notify:send'] },
          },
        ],
        admin,
      );
      await approvePendingReviews(tg);
      // A second gateway on the same database: another replica (on SQLite, another connection).
      replica = await openGateway({ db: world.db, clock: () => now, executor: executor() });
    });
    after(async () => {
      await replica?.close();
      await inspector?.close();
      await world?.close();
    });

    // Concurrent calls through a second gateway only on PostgreSQL, the replicated backend: two
    // better-sqlite3 connections in one process would block each other's event loop on the lock.
    const racer = () => (backend.name === 'postgres' ? replica : tg);
    // A session opened for a token's user is used by that same principal (session-principal.ts).
    const open = async (
      agentId: string,
      options: Parameters<typeof tg.sessions.open>[1] & {
        tokenUser?: { id: string; permissions: string[] };
      } = {},
    ) => {
      const { tokenUser, ...opening } = options;
      const principal = {
        kind: 'agent' as const,
        agentId,
        ...(tokenUser ? { user: tokenUser } : {}),
      };
      const s = await tg.sessions.open(principal, opening);
      return { principal, sessionId: s.id };
    };
    const spent = async (sessionId: string) =>
      Number(
        (
          await inspector.db
            .selectFrom('sessions')
            .select('spend_cents')
            .where('id', '=', sessionId)
            .executeTakeFirstOrThrow()
        ).spend_cents,
      );

    test('the reported case: under a budget of 1,000.00 a payment of 1,000,000 is refused and one of 5 runs', async () => {
      const ctx = await open('payer');
      assert.equal(
        ruleOf(await tg.gate.invoke(ctx, 'pay', { amount: 1_000_000 })),
        'BUDGET_EXCEEDED budget.spend',
      );
      assert.equal(await spent(ctx.sessionId), 0, 'a refused call is charged nothing');
      assert.equal(ruleOf(await tg.gate.invoke(ctx, 'pay', { amount: 5 })), 'allow');
      assert.equal(await spent(ctx.sessionId), 500);
      // Exactly up to the budget, never past it by a cent.
      assert.equal(ruleOf(await tg.gate.invoke(ctx, 'pay', { amount: 995 })), 'allow');
      assert.equal(await spent(ctx.sessionId), 100_000);
      assert.equal(
        ruleOf(await tg.gate.invoke(ctx, 'pay', { amount: 0.01 })),
        'BUDGET_EXCEEDED budget.spend',
      );
      // A tool without a cost is not stopped by a spent budget.
      assert.equal(ruleOf(await tg.gate.invoke(ctx, 'lookup', { invoice: 'I-1' })), 'allow');
    });

    test('costs are read exactly: cents as integers, major units with two places, never rounded', async () => {
      const ctx = await open('payer');
      assert.equal(ruleOf(await tg.gate.invoke(ctx, 'pay', { amount: 12.34 })), 'allow');
      assert.equal(await spent(ctx.sessionId), 1234);
      assert.equal(ruleOf(await tg.gate.invoke(ctx, 'pay_cents', { cents: 66 })), 'allow');
      assert.equal(ruleOf(await tg.gate.invoke(ctx, 'quote', { invoice: 'Q-1' })), 'allow');
      assert.equal(await spent(ctx.sessionId), 1234 + 66 + 25);
      // A third decimal place would need rounding: refused, nothing charged.
      const d = await tg.gate.invoke(ctx, 'pay', { amount: 1.005 });
      assert.equal(ruleOf(d), 'INPUT_INVALID cost.invalid');
      // A negative cost would give budget back: the input schema refuses it.
      assert.equal((await tg.gate.invoke(ctx, 'pay', { amount: -500 })).kind, 'deny');
      assert.equal(await spent(ctx.sessionId), 1325);
    });

    test('48 concurrent payments of 25.00 with 990.00 left, half through a second gateway on PostgreSQL: exactly 39 run, never a cent over', async () => {
      const ctx = await open('payer');
      // 990.00 left after this one: 39 more payments of 25.00 fit (975.00), the 40th does not.
      assert.equal(ruleOf(await tg.gate.invoke(ctx, 'pay_cents', { cents: 1000 })), 'allow');
      const results = await Promise.all(
        Array.from({ length: 48 }, (_, i) =>
          (i % 2 === 0 ? tg : racer()).gate.invoke(ctx, 'pay', { amount: 25 }),
        ),
      );
      const allowed = results.filter((r) => r.kind === 'allow').length;
      assert.equal(allowed, 39);
      assert.ok(
        results.every((r) => r.kind === 'allow' || ruleOf(r) === 'BUDGET_EXCEEDED budget.spend'),
      );
      assert.equal(await spent(ctx.sessionId), 1000 + 39 * 2500);
    });

    test('a per-agent call ceiling holds across new sessions and new run ids; its window rolls', async () => {
      const outcomes: string[] = [];
      for (let i = 0; i < 9; i++) {
        const ctx = await open('capped', { runId: `run-${i}` });
        outcomes.push(ruleOf(await tg.gate.invoke(ctx, 'lookup', { invoice: `I-${i}` })));
      }
      // agent_user (acting for nobody) allows 3 per hour, whatever the session or run.
      assert.deepEqual(outcomes.slice(0, 3), ['allow', 'allow', 'allow']);
      assert.ok(outcomes.slice(3).every((o) => o === 'RATE_LIMITED ceiling.calls_per_tool'));
      // Another user of the same agent has their own 3, until the agent-wide 6 is reached.
      const forAna = await open('capped', { onBehalfOf: 'ana@example.com' });
      const forBen = await open('capped', { onBehalfOf: 'ben@example.com' });
      const more: string[] = [];
      for (let i = 0; i < 3; i++) {
        more.push(ruleOf(await tg.gate.invoke(forAna, 'lookup', { invoice: `A-${i}` })));
      }
      assert.deepEqual(more, ['allow', 'allow', 'allow']);
      assert.equal(
        ruleOf(await tg.gate.invoke(forBen, 'lookup', { invoice: 'B-0' })),
        'RATE_LIMITED ceiling.calls_per_tool',
        "the agent's 6 per hour are used up, whichever user it acts for",
      );
      // Another tool has its own count.
      assert.equal(ruleOf(await tg.gate.invoke(forBen, 'quote', { invoice: 'Q' })), 'allow');
      // An hour (and a bucket) later the window has rolled past every one of those calls.
      now = new Date(now.getTime() + 3600_000 + 61_000);
      assert.equal(ruleOf(await tg.gate.invoke(forBen, 'lookup', { invoice: 'B-1' })), 'allow');
    });

    test('30 concurrent payments from 10 sessions (two gateways on PostgreSQL) never pass an agent ceiling of 10.00', async () => {
      const sessions = await Promise.all(
        Array.from({ length: 10 }, (_, i) => open('wide', { runId: `wide-${i}` })),
      );
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          (i % 2 === 0 ? tg : racer()).gate.invoke(
            sessions[i % 10] as (typeof sessions)[0],
            'pay_cents',
            {
              cents: 100,
            },
          ),
        ),
      );
      assert.equal(results.filter((r) => r.kind === 'allow').length, 10);
      assert.ok(
        results.every(
          (r) => r.kind === 'allow' || ruleOf(r) === 'BUDGET_EXCEEDED ceiling.spend_cents',
        ),
      );
      let total = 0;
      for (const s of sessions) total += await spent(s.sessionId);
      assert.equal(total, 1000, 'refused charges were rolled back in their sessions');
    });

    test('an agent-wide spend ceiling holds across sessions; a refused charge takes nothing anywhere', async () => {
      now = new Date(now.getTime() + 2 * 3600_000);
      const first = await open('capped', { onBehalfOf: 'ana@example.com' });
      assert.equal(ruleOf(await tg.gate.invoke(first, 'pay_cents', { cents: 800 })), 'allow');
      // Each session's own budget is 800: a new session would reset that, not the ceiling.
      const second = await open('capped', { onBehalfOf: 'ben@example.com' });
      assert.equal(
        ruleOf(await tg.gate.invoke(second, 'pay_cents', { cents: 300 })),
        'BUDGET_EXCEEDED ceiling.spend_cents',
      );
      assert.equal(await spent(second.sessionId), 0, 'the session charge was rolled back too');
      assert.equal(ruleOf(await tg.gate.invoke(second, 'pay_cents', { cents: 200 })), 'allow');
      const third = await open('capped', { runId: 'fresh-run' });
      assert.equal(
        ruleOf(await tg.gate.invoke(third, 'pay_cents', { cents: 1 })),
        'BUDGET_EXCEEDED ceiling.spend_cents',
      );
    });

    test('an external-send ceiling per (agent, user) holds across sessions; another user has their own', async () => {
      // Each send is approved (external_send's floor); the approved retry is what is counted.
      const send = async (ctx: Parameters<typeof tg.gate.invoke>[0], to: string) => {
        const args = { to, text: 'Your refund is on its way' };
        const first = await tg.gate.invoke(ctx, 'notify', args);
        if (first.kind !== 'pending_approval') return ruleOf(first);
        await tg.approvals.approve(first.approvalId, approver);
        return ruleOf(await tg.gate.invoke(ctx, 'notify', args));
      };
      const results: string[] = [];
      for (let i = 0; i < 3; i++) {
        const ctx = await open('sender', { onBehalfOf: 'ana@example.com', runId: `send-${i}` });
        results.push(await send(ctx, `c${i}@customer.example`));
      }
      assert.deepEqual(results, ['allow', 'allow', 'BUDGET_EXCEEDED ceiling.external_sends']);
      const forBen = await open('sender', { onBehalfOf: 'ben@example.com' });
      assert.equal(await send(forBen, 'd@customer.example'), 'allow');
    });

    test('an egress ceiling counts bytes after calls and stops the next call in any session', async () => {
      const at = new Date('2026-06-02T00:00:00Z');
      const ceilings = {
        windows: [{ scope: 'agent' as const, window_seconds: 600, egress_bytes: 1000 }],
      };
      const call = (sessionId: string) => ({
        sessionId,
        agentId: 'egress-bot',
        userId: null,
        toolId: 'fetch',
        externalSend: false,
        cents: 0,
        spendBudget: undefined,
        now: at,
      });
      assert.deepEqual(await admitCall(inspector, call('s1'), ceilings), {
        ok: true,
        egressLeft: 1000,
      });
      await chargeEgress(
        inspector.db,
        { agentId: 'egress-bot', userId: 'u', now: at },
        ceilings,
        999,
      );
      // What is left caps the next call's egress (the gate hands it to the proxy's byte budget).
      assert.deepEqual(await admitCall(inspector, call('s2'), ceilings), {
        ok: true,
        egressLeft: 1,
      });
      await chargeEgress(
        inspector.db,
        { agentId: 'egress-bot', userId: null, now: at },
        ceilings,
        1,
      );
      const refused = await admitCall(inspector, call('s3'), ceilings);
      assert.equal(refused.ok ? '' : refused.rule, 'ceiling.egress_bytes');
    });

    test('a private read keeps unconstrained egress refused for that agent and user in every later session', async () => {
      // Two tokens of one user with different permissions: the first session may read private
      // data only, the second may post only, so neither set holds both (C5) — the read must
      // still stop the post.
      const reader = await open('mixer', {
        tokenUser: { id: 'carla@example.com', permissions: ['billing:read'] },
      });
      assert.equal(
        ruleOf(await tg.gate.invoke(reader, 'read_private', { invoice: 'I-1' })),
        'allow',
      );
      const poster = await open('mixer', {
        tokenUser: { id: 'carla@example.com', permissions: ['web:post'] },
        runId: 'another-run',
      });
      assert.equal(
        ruleOf(await replica.gate.invoke(poster, 'post_anywhere', { text: 'the data' })),
        'TOXIC_FLOW flow.private_then_egress',
      );
      // The benign neighbour: another user of the same agent reaches the approval step.
      const other = await open('mixer', {
        tokenUser: { id: 'dan@example.com', permissions: ['web:post'] },
      });
      assert.equal(
        (await tg.gate.invoke(other, 'post_anywhere', { text: 'hi' })).kind,
        'pending_approval',
      );
      // And once the flow window (default one hour) has passed, so does this user.
      now = new Date(now.getTime() + 3600_000 + 61_000);
      const later = await open('mixer', {
        tokenUser: { id: 'carla@example.com', permissions: ['web:post'] },
      });
      assert.equal(
        (await tg.gate.invoke(later, 'post_anywhere', { text: 'hi' })).kind,
        'pending_approval',
      );
    });
  });
}
