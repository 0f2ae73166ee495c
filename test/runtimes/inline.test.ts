/**
 * The inline runtime on its own: a registered handler runs with the checked arguments only, a
 * missing handler or a definition of another kind is refused (never run some other way), and a
 * handler that throws is a typed failure that does not pass on what it threw.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkToolDefinition, type ToolDefinition } from '../../src/domain/catalog/index.js';
import { InlineExecutor, InlineRuntime } from '../../src/execution/runtimes/index.js';
import { validTool } from '../support/tools.js';
import { contextFor, credentialsFor, SECRET } from './harness.js';

function inline(handler: string): ToolDefinition {
  const checked = checkToolDefinition(
    validTool({ data_access: 'public', runtime: { kind: 'inline', handler } }),
  );
  assert.ok(checked.ok);
  return checked.definition;
}

const seen: unknown[] = [];
const runtime = new InlineRuntime(
  new InlineExecutor()
    .register('t.echo', (a) => {
      seen.push(a);
      return { status: 'ok', echo: a };
    })
    .register('t.async', async () => ({ status: 'later' }))
    .register('t.throws', () => {
      throw new Error(`internal detail ${SECRET}`);
    }),
);

test('a registered handler gets the checked arguments, and nothing of the credential', async () => {
  const def = inline('t.echo');
  const c = { def, args: { invoice: 'INV-1' }, credentials: credentialsFor('TOKEN', 'X-Key') };
  const r = await runtime.run(def, c.args, contextFor(c));
  assert.deepEqual(r, { ok: true, output: { status: 'ok', echo: { invoice: 'INV-1' } } });
  assert.deepEqual(seen.at(-1), { invoice: 'INV-1' });
  assert.equal(runtime.kind, 'inline');
});

test('an async handler is awaited', async () => {
  const def = inline('t.async');
  const r = await runtime.run(def, {}, contextFor({ def, args: {} }));
  assert.deepEqual(r, { ok: true, output: { status: 'later' } });
});

test('a handler that is not registered is refused as runtime.unavailable', async () => {
  const def = inline('t.missing');
  const r = await runtime.run(def, {}, contextFor({ def, args: {} }));
  assert.equal(r.ok, false);
  assert.equal(!r.ok && r.code, 'EXECUTION_FAILED');
  assert.equal(!r.ok && r.rule, 'runtime.unavailable');
});

test('a throwing handler is execute.error, and what it threw stays inside', async () => {
  const def = inline('t.throws');
  const r = await runtime.run(def, {}, contextFor({ def, args: {} }));
  assert.equal(r.ok, false);
  assert.equal(!r.ok && r.rule, 'execute.error');
  assert.ok(!JSON.stringify(r).includes(SECRET));
  assert.ok(!JSON.stringify(r).includes('internal detail'));
});

test('a definition of another kind is refused, not run', async () => {
  const def = { ...inline('t.echo'), runtime: { kind: 'command', argv: ['/bin/true'] } } as const;
  const r = await runtime.run(def, {}, contextFor({ def, args: {} }));
  assert.equal(!r.ok && r.rule, 'runtime.unavailable');
  assert.equal(!r.ok && r.message, 'the command runtime is not available on this gateway');
});
