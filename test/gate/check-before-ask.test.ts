/**
 * Check before asking, charge after approval (docs/architecture.md §3): a call that a budget, a
 * rate limit or a ceiling would refuse is refused before it waits for a person — no approval is
 * opened, nobody is asked, nothing is charged — while the benign neighbour (within its limits)
 * waits, is approved, and only then is charged and runs. An approved retry the limits would
 * refuse keeps its approval. On every backend.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { GateDecision } from '../../src/gate/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { operator } from '../support/operators.js';
import { approvePendingReviews } from '../support/reviews.js';
import { validTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const approver = operator('test-admin');

function ruleOf(d: GateDecision): string {
  return d.kind === 'deny' ? `${d.code} ${d.rule}` : d.kind;
}

/** A payment that always waits for a person; its cost is its `amount` in major units. */
const payTool = {
  kind: 'Tool',
  spec: validTool({
    id: 'pay',
    name: 'pay',
    description: 'Pay an amount to a supplier.',
    action_class: 'reversible_write',
    data_access: 'none',
    required_capabilities: ['pay:send'],
    approval: { mode: 'always' },
    input_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['amount'],
      properties: { amount: { type: 'number', minimum: 0 } },
    },
    cost: { argument: 'amount', unit: 'major' },
    runtime: { kind: 'inline', handler: 't.pay' },
  }),
};

/** A read that waits for a person, at most two calls a run. */
const exportTool = {
  kind: 'Tool',
  spec: validTool({
    id: 'export_ledger',
    name: 'export_ledger',
    description: 'Export the ledger of one month.',
    required_capabilities: ['pay:send'],
    approval: { mode: 'always' },
    rate_limit: { per_run: 2 },
    runtime: { kind: 'inline', handler: 't.read' },
  }),
};

for (const backend of backends()) {
  describe(`check before asking on ${backend.name}`, () => {
    let world: World;
    let tg: Gateway;
    let inspector: Store;
    let ran = 0;

    before(async () => {
      const executor = demoExecutor()
        .register('t.pay', () => {
          ran += 1;
          return { status: 'paid' };
        })
        .register('t.read', () => ({ status: 'read' }));
      world = await openWorld({ backend, options: { executor } });
      tg = world.tg;
      inspector = await openStore(world.db);
      await tg.config.apply(
        [
          payTool,
          exportTool,
          { kind: 'Agent', spec: { id: 'payer', owner: 'qa', budgets: { spend_cents: 10_000 } } },
          { kind: 'Grant', spec: { agent: 'payer', capabilities: ['pay:send'] } },
        ],
        admin,
      );
      await approvePendingReviews(tg);
    });
    after(async () => {
      await inspector?.close();
      await world?.close();
    });

    const open = async (runId?: string) => {
      const principal = { kind: 'agent' as const, agentId: 'payer' };
      const s = await tg.sessions.open(principal, runId ? { runId } : {});
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
    const pendingCount = async () => (await tg.approvals.list('pending')).length;

    test('an over-budget payment is refused before anyone is asked; one within budget waits, is approved, then charged', async () => {
      const ctx = await open();
      const before = await pendingCount();
      const over = await tg.gate.invoke(ctx, 'pay', { amount: 100.01 });
      assert.equal(ruleOf(over), 'BUDGET_EXCEEDED budget.spend');
      assert.equal(await pendingCount(), before, 'no approval was opened for a refused call');
      assert.equal(await spent(ctx.sessionId), 0);

      // The neighbour within budget waits for a person, and waiting charges nothing.
      const within = await tg.gate.invoke(ctx, 'pay', { amount: 60 });
      assert.equal(within.kind, 'pending_approval');
      assert.equal(await pendingCount(), before + 1);
      assert.equal(await spent(ctx.sessionId), 0, 'a waiting call is charged nothing');
      if (within.kind !== 'pending_approval') return;
      await tg.approvals.approve(within.approvalId, approver);
      const runsBefore = ran;
      assert.equal(ruleOf(await tg.gate.invoke(ctx, 'pay', { amount: 60 })), 'allow');
      assert.equal(ran, runsBefore + 1);
      assert.equal(await spent(ctx.sessionId), 6000, 'charged after approval');

      // 40.00 is left: 50.00 is refused at once, 40.00 waits.
      assert.equal(
        ruleOf(await tg.gate.invoke(ctx, 'pay', { amount: 50 })),
        'BUDGET_EXCEEDED budget.spend',
      );
      assert.equal((await tg.gate.invoke(ctx, 'pay', { amount: 40 })).kind, 'pending_approval');
      assert.equal(await spent(ctx.sessionId), 6000);
    });

    test('an approved call the budget no longer covers is refused and keeps its approval', async () => {
      const ctx = await open();
      const first = await tg.gate.invoke(ctx, 'pay', { amount: 70 });
      const second = await tg.gate.invoke(ctx, 'pay', { amount: 30.5 });
      assert.equal(first.kind, 'pending_approval');
      assert.equal(second.kind, 'pending_approval');
      if (first.kind !== 'pending_approval' || second.kind !== 'pending_approval') return;
      await tg.approvals.approve(first.approvalId, approver);
      await tg.approvals.approve(second.approvalId, approver);
      assert.equal(ruleOf(await tg.gate.invoke(ctx, 'pay', { amount: 70 })), 'allow');
      // 30.00 left: the approved 30.50 is refused, charged nothing, and its approval stays unused.
      assert.equal(
        ruleOf(await tg.gate.invoke(ctx, 'pay', { amount: 30.5 })),
        'BUDGET_EXCEEDED budget.spend',
      );
      assert.equal(await spent(ctx.sessionId), 7000);
      assert.equal((await tg.approvals.get(second.approvalId)).status, 'approved');
    });

    test('a call past its rate limit is refused before it waits; the calls within it wait', async () => {
      const ctx = await open('run-export');
      for (const month of ['2026-01', '2026-02']) {
        const d = await tg.gate.invoke(ctx, 'export_ledger', { invoice: month });
        assert.equal(d.kind, 'pending_approval');
        if (d.kind !== 'pending_approval') return;
        await tg.approvals.approve(d.approvalId, approver);
        assert.equal(
          ruleOf(await tg.gate.invoke(ctx, 'export_ledger', { invoice: month })),
          'allow',
        );
      }
      const before = await pendingCount();
      assert.equal(
        ruleOf(await tg.gate.invoke(ctx, 'export_ledger', { invoice: '2026-03' })),
        'RATE_LIMITED rate.per_run',
      );
      assert.equal(await pendingCount(), before, 'nobody is asked about a call the limit refuses');
      // Another run has its own allowance: its call waits for a person.
      const other = await open('run-other');
      assert.equal(
        (await tg.gate.invoke(other, 'export_ledger', { invoice: '2026-03' })).kind,
        'pending_approval',
      );
    });
  });
}
