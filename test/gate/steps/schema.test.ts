/** The `schema` step: object, depth, sizes, input schema, the call's own copy, and its cost. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cloneArguments } from '../../../src/gate/steps/schema.js';
import { harnessForFile } from './step-harness.js';

const { h, ctx } = harnessForFile({ session: true });

const schema = (tool: string, args: unknown) => h.at('schema', ctx, tool, args);

test('valid arguments go on as a copy the caller cannot change afterwards, with their cost', async () => {
  const args = { invoice: 'I-1' };
  const { s, r } = await schema('priced', args);
  assert.equal(r, undefined);
  assert.deepEqual(s.callArgs, args);
  assert.notEqual(s.callArgs, args);
  assert.equal(s.cents, 60);
});

test('non-objects, too deep, too large and schema mismatches are INPUT_INVALID with their rule', async () => {
  let deep: unknown = 'x';
  for (let i = 0; i < 100; i++) deep = { a: deep };
  const cases: [unknown, string][] = [
    [[1], 'schema.type'],
    [null, 'schema.type'],
    [deep, 'schema.depth'],
    [{ invoice: 'x'.repeat(100_000) }, 'size.argument'],
    [{ invoice: 42 }, 'schema.type'],
    [{ invoice: 'I-1', extra: true }, 'schema.additionalProperties'],
  ];
  for (const [args, rule] of cases) {
    const { r } = await schema('echo', args);
    assert.ok(r?.kind === 'refuse', rule);
    assert.equal(r.code, 'INPUT_INVALID');
    assert.match(r.rule, new RegExp(`^${rule.replace('.', '\\.')}`), JSON.stringify(r));
  }
});

test('a schema mismatch lists its problems by pointer', async () => {
  const { r } = await schema('echo', { invoice: 42 });
  assert.ok(r?.kind === 'refuse');
  assert.deepEqual(r.details, {
    problems: [{ pointer: '/invoice', message: 'must be string', rule: 'schema.type' }],
  });
});

test('the copy keeps an own __proto__ member as a member, never as a prototype', () => {
  const args = JSON.parse('{"__proto__": {"polluted": true}, "a": [1, {"b": 2}]}');
  const copy = cloneArguments(args);
  assert.equal(Object.getPrototypeOf(copy), Object.prototype);
  assert.deepEqual(Object.keys(copy), ['__proto__', 'a']);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});
