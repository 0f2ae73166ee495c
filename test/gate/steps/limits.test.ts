/** The `limits` step: rate slots, external sends, spend — taken atomically, all or none. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { harnessForFile } from './step-harness.js';

const { h } = harnessForFile();

const limits = (ctx: { agentId: string; sessionId: string }, tool: string, args: unknown) =>
  h.at('limits', ctx, tool, args);

/** The session's counters as the store holds them. */
const counters = (sessionId: string) =>
  h.store.db
    .selectFrom('sessions')
    .select(['external_sends', 'spend_cents'])
    .where('id', '=', sessionId)
    .executeTakeFirstOrThrow();

test('a per-run rate limit admits the first call of the run and refuses the next', async () => {
  const ctx = await h.open();
  assert.equal((await limits(ctx, 'limited', { invoice: 'I-1' })).r, undefined);
  const second = await limits(ctx, 'limited', { invoice: 'I-1' });
  assert.ok(second.r?.kind === 'refuse');
  assert.equal(second.r.code, 'RATE_LIMITED');
  assert.equal(second.r.rule, 'rate.per_run');
});

test("an external send counts against the session's budget, in the store and the cached row", async () => {
  const ctx = await h.open('capped');
  const first = await limits(ctx, 'send', { to: 'a@example.com', text: 'hello' });
  assert.equal(first.r, undefined);
  const row = await counters(ctx.sessionId);
  assert.equal(row.external_sends, 1);
  const second = await limits(ctx, 'send', { to: 'a@example.com', text: 'hello' });
  assert.ok(second.r?.kind === 'refuse');
  assert.equal(second.r.code, 'BUDGET_EXCEEDED');
  assert.equal(second.r.rule, 'budget.external_sends');
});

test("a call's cost is charged to the spend budget; one that would pass it is refused and charged nothing", async () => {
  const ctx = await h.open('capped');
  assert.equal((await limits(ctx, 'priced', { invoice: 'I-1' })).r, undefined);
  const over = await limits(ctx, 'priced', { invoice: 'I-1' });
  assert.ok(over.r?.kind === 'refuse');
  assert.equal(over.r.code, 'BUDGET_EXCEEDED');
  const row = await counters(ctx.sessionId);
  assert.equal(row.spend_cents, 60);
});
