/** The declared step list is the order a call runs, and gate.ts stays an orchestrator. */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { Gate } from '../../../src/gate/gate.js';
import { GATE_STEPS } from '../../../src/gate/steps/pipeline.js';
import type { Step } from '../../../src/gate/steps/step.js';
import { harnessForFile, harnessGate } from './step-harness.js';

const { h } = harnessForFile();

/** A gate over the harness's services whose steps record their names as they run. */
function watchedGate(ran: string[]): Gate {
  const steps: Step[] = GATE_STEPS.map((s) => ({
    name: s.name,
    run: (state) => {
      ran.push(s.name);
      return s.run(state);
    },
  }));
  return harnessGate(h, { steps });
}

test('an allowed call runs every declared step, in the declared order, once', async () => {
  const ran: string[] = [];
  const gate = watchedGate(ran);
  const ctx = await h.open();
  const decision = await gate.invoke(ctx, 'echo', { invoice: 'I-1' }, { idempotencyKey: 'k-1' });
  assert.equal(decision.kind, 'allow');
  assert.deepEqual(
    ran,
    GATE_STEPS.map((s) => s.name),
  );
  assert.deepEqual(await h.auditOf(decision.callId), ['call.pre', 'call.post']);
});

test('a refusal stops the list at the refusing step, and the gate audits it as a denial', async () => {
  const ran: string[] = [];
  const gate = watchedGate(ran);
  const ctx = await h.open();
  const decision = await gate.invoke(ctx, 'echo', { invoice: 42 });
  assert.equal(decision.kind, 'deny');
  assert.equal(decision.kind === 'deny' ? decision.code : '', 'INPUT_INVALID');
  assert.deepEqual(ran, ['session', 'resolve', 'lifecycle', 'scope', 'headers', 'schema']);
  assert.deepEqual(await h.auditOf(decision.callId), ['call.denied']);
});

test('the list is the one documented order: flow before limits, idempotency around approval', () => {
  assert.deepEqual(
    GATE_STEPS.map((s) => s.name),
    [
      'session',
      'resolve',
      'lifecycle',
      'scope',
      'headers',
      'schema',
      'grant',
      'policy',
      'flow',
      'idempotency-lookup',
      'approval',
      'idempotency-claim',
      'limits',
      'audit-pre',
      'execute',
      'result',
      'audit-post',
    ],
  );
  assert.ok(Object.isFrozen(GATE_STEPS));
});

test('gate.ts is an orchestrator: at most 300 lines and no SQL of its own', () => {
  const source = readFileSync(new URL('../../../src/gate/gate.ts', import.meta.url), 'utf8');
  assert.ok(source.split('\n').length <= 300);
  assert.doesNotMatch(source, /selectFrom|updateTable|insertInto|deleteFrom|\.db\b/);
});

test('no file of the gate reads or writes a table: counters, sessions and idempotency have their own store access', () => {
  const gate = new URL('../../../src/gate/', import.meta.url);
  const files = readdirSync(gate, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.ts'));
  assert.ok(files.length > 20, 'the scan found the gate and its steps');
  for (const file of files) {
    const source = readFileSync(new URL(file, gate), 'utf8');
    assert.doesNotMatch(
      source,
      /selectFrom|updateTable|insertInto|deleteFrom|\.db\b|from 'kysely'/,
      file,
    );
  }
});

test("each step file's comment names its step, never its position in the declared list", () => {
  const steps = new URL('../../../src/gate/steps/', import.meta.url);
  for (const step of GATE_STEPS) {
    const source = readFileSync(new URL(`${step.name}.ts`, steps), 'utf8');
    const header = /@module The `([a-z-]+)` step:/.exec(source);
    assert.ok(header, `${step.name}.ts names its step`);
    assert.equal(header[1], step.name, `${step.name}.ts`);
  }
});
