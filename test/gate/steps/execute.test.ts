/** The `execute` step: the run in its runtime; every failure is a result with its code, never a throw. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ToolRuntime } from '../../../src/execution/runtimes/index.js';
import { execute } from '../../../src/gate/steps/execute.js';
import { harnessForFile } from './step-harness.js';

const { h } = harnessForFile();

async function executeOf(
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
  const run = await executeOf(ctx, 'echo', { invoice: 'I-1' });
  assert.ok(run.ok);
  assert.deepEqual(run.output, { status: 'ok', echo: { invoice: 'I-1' } });
  assert.deepEqual(run.redact, []);
});

test('a handler that throws is EXECUTION_FAILED, not a thrown error', async () => {
  const ctx = await h.open();
  const run = await executeOf(ctx, 'failing', { invoice: 'I-1' });
  assert.ok(!run.ok);
  assert.equal(run.code, 'EXECUTION_FAILED');
  assert.equal(run.rule, 'execute.error');
});

test('a runtime this gateway does not have is refused, never run with less isolation', async () => {
  const ctx = await h.open();
  const run = await executeOf(ctx, 'send', { to: 'a@example.com', text: 'hi' });
  assert.ok(!run.ok);
  assert.equal(run.rule, 'runtime.unavailable');
});

test('a call withdrawn before it started is not run', async () => {
  const ctx = await h.open();
  const controller = new AbortController();
  controller.abort();
  const run = await executeOf(ctx, 'echo', { invoice: 'I-1' }, controller.signal);
  assert.ok(!run.ok);
  assert.equal(run.code, 'CALL_CANCELLED');
  assert.equal(run.outcome, 'cancelled');
});

test('a runtime that throws (a driver bug) is a typed failure, never an error past the pre record', async () => {
  const ctx = await h.open();
  const s = await h.before(h.state(ctx, 'echo', { invoice: 'I-1' }), 'execute');
  /** The execute step on this call's state, with `runtimes` as the gateway's. */
  const runWith = (runtimes: Parameters<typeof execute>[0]['runtimes']) =>
    execute(
      { runtimes, credentials: undefined, identities: h.deps.identities },
      s.def,
      s.callArgs,
      s.compiled,
      {
        callId: s.callId,
        sessionId: s.session.id,
        agentId: ctx.agentId,
        userId: null,
        destinations: s.destinations,
        egressLimit: undefined,
        storedEgressBytes: 0,
      },
    );
  const throwing: ToolRuntime = {
    kind: 'inline',
    run: async () => {
      throw new Error('driver bug');
    },
  };
  const run = await runWith({ inline: throwing });
  assert.ok(!run.ok);
  assert.equal(run.code, 'EXECUTION_FAILED');
  assert.equal(run.rule, 'runtime.error');
  assert.ok(!run.message.includes('driver bug'), 'the error text is not passed on');
  // The same tool through its real runtime runs: the catch changes nothing for a working one.
  const real = await runWith(h.deps.runtimes);
  assert.ok(real.ok);
});
