/** The `result` step: echoed credentials scrubbed, size capped, output schema checked. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ExecuteRun } from '../../../src/gate/steps/run-result.js';
import type { CallState } from '../../../src/gate/steps/step.js';
import { harnessForFile } from './step-harness.js';

const { h, ctx } = harnessForFile({ session: true });

/** The state of a resolved call whose run came to `run` (set directly). */
async function withRun(tool: string, run: ExecuteRun): Promise<CallState> {
  const s = await h.before(h.state(ctx, tool, { invoice: 'I-1' }), 'execute');
  s.run = run;
  assert.equal(await h.step(s, 'result'), undefined);
  return s;
}

const ok = (output: unknown, redact: readonly string[] = []): ExecuteRun => ({
  ok: true,
  output,
  bytes: 0,
  redact,
  extra: { outcome: 'ok', egressSpent: 0 },
});

test('a valid result passes with its size and the run facts', async () => {
  const s = await withRun('echo', ok({ status: 'fine' }));
  assert.deepEqual(s.result, {
    ok: true,
    output: { status: 'fine' },
    bytes: Buffer.byteLength('{"status":"fine"}'),
    outcome: 'ok',
    egressSpent: 0,
    // The scan found nothing; the label says where the text came from.
    trust: {
      source: 'trusted',
      provenance: 'internal',
      data_access: 'none',
      injection: false,
      findings: [],
    },
  });
});

test("a result holding the call's credential is scrubbed and marked redacted", async () => {
  const s = await withRun(
    'echo',
    ok({ status: 'token sk-live-123456 leaked' }, ['sk-live-123456']),
  );
  assert.ok(s.result.ok);
  assert.doesNotMatch(JSON.stringify(s.result.output), /sk-live-123456/);
  assert.equal(s.result.redacted, true);
});

test('a result over the output cap is OUTPUT_INVALID result.size', async () => {
  const s = await withRun('big', ok({ status: 'x'.repeat(2000) }));
  assert.ok(!s.result.ok);
  assert.equal(s.result.rule, 'result.size');
});

test('a result that does not match the output schema is OUTPUT_INVALID result.schema', async () => {
  const s = await withRun('echo', ok({ status: 42 }));
  assert.ok(!s.result.ok);
  assert.equal(s.result.code, 'OUTPUT_INVALID');
  assert.equal(s.result.rule, 'result.schema');
});

test('a failed run passes through unchanged', async () => {
  const failed: ExecuteRun = {
    ok: false,
    code: 'EXECUTION_FAILED',
    rule: 'execute.error',
    message: 'the tool failed',
    bytes: 0,
  };
  const s = await withRun('echo', failed);
  assert.equal(s.result, failed);
});
