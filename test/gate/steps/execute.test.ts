/** Step 13, execute: the run in its runtime; every failure is a result with its code, never a throw. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Harness, openHarness } from './step-harness.js';

let h: Harness;
before(async () => {
  h = await openHarness();
});
after(async () => {
  await h.close();
});

async function execute(
  ctx: { agentId: string; sessionId: string },
  tool: string,
  args: unknown,
  signal?: AbortSignal,
) {
  const s = await h.before(h.state(ctx, tool, args, signal ? { signal } : {}), 'execute');
  assert.equal(await h.step(s, 'execute'), undefined, 'execute never ends the call itself');
  return s.run;
}

test('an inline tool runs with the checked arguments; its raw output goes to the result step', async () => {
  const ctx = await h.open();
  const run = await execute(ctx, 'echo', { invoice: 'I-1' });
  assert.ok(run.ok);
  assert.deepEqual(run.output, { status: 'ok', echo: { invoice: 'I-1' } });
  assert.deepEqual(run.redact, []);
});

test('a handler that throws is EXECUTION_FAILED, not a thrown error', async () => {
  const ctx = await h.open();
  const run = await execute(ctx, 'failing', { invoice: 'I-1' });
  assert.ok(!run.ok);
  assert.equal(run.code, 'EXECUTION_FAILED');
  assert.equal(run.rule, 'execute.error');
});

test('a runtime this gateway does not have is refused, never run with less isolation', async () => {
  const ctx = await h.open();
  const run = await execute(ctx, 'send', { to: 'a@example.com', text: 'hi' });
  assert.ok(!run.ok);
  assert.equal(run.rule, 'runtime.unavailable');
});

test('a call withdrawn before it started is not run', async () => {
  const ctx = await h.open();
  const controller = new AbortController();
  controller.abort();
  const run = await execute(ctx, 'echo', { invoice: 'I-1' }, controller.signal);
  assert.ok(!run.ok);
  assert.equal(run.code, 'CALL_CANCELLED');
  assert.equal(run.outcome, 'cancelled');
});
