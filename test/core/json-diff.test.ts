/**
 * The changed JSON paths a four-eyes change page lists above its line diff (attack round 27 F1):
 * one changed `maximum` among 1,200 properties is one path with its value before and after;
 * members added, removed or of another type, array items by index, keys holding `/` or `~` as
 * RFC 6901 escapes, in canonical order; past the listing limit every change is still counted.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalJson, jsonDiff, MAX_LISTED_PATHS } from '../../src/core/index.js';
import { wideDefinition } from './wide-definition.js';

const canonical = (value: unknown) => JSON.parse(canonicalJson(value)) as unknown;

test('one changed maximum among 1,200 properties is one path, with its value before and after', () => {
  const diff = jsonDiff(
    canonical(wideDefinition(1200)),
    canonical(wideDefinition(1200, { f0600: 250 })),
  );
  assert.deepEqual(diff, {
    changes: [
      { op: 'change', path: '/input_schema/properties/f0600/maximum', before: 100, after: 250 },
    ],
    total: 1,
    unlistedBeyondProse: 0,
  });
  assert.deepEqual(jsonDiff(canonical(wideDefinition(1200)), canonical(wideDefinition(1200))), {
    changes: [],
    total: 0,
    unlistedBeyondProse: 0,
  });
});

test('added, removed and retyped members, array items by index, escaped keys, in canonical order', () => {
  const before = { a: [1, 2, 3], 'x/y~': 1, o: { p: 1 }, q: 1, n: null, z: { deep: { er: 'x' } } };
  const after = { a: [1, 5], 'x/y~': 2, o: [1], r: { s: 1 }, n: 0, z: { deep: { er: 'y' } } };
  assert.deepEqual(jsonDiff(before, after).changes, [
    { op: 'change', path: '/a/1', before: 2, after: 5 },
    { op: 'remove', path: '/a/2', before: 3 },
    { op: 'change', path: '/n', before: null, after: 0 },
    { op: 'change', path: '/o', before: { p: 1 }, after: [1] },
    { op: 'remove', path: '/q', before: 1 },
    { op: 'add', path: '/r', after: { s: 1 } },
    { op: 'change', path: '/x~1y~0', before: 1, after: 2 },
    { op: 'change', path: '/z/deep/er', before: 'x', after: 'y' },
  ]);
  // A key spelling another path is not that path.
  assert.deepEqual(jsonDiff({ 'a/b': 1, a: { b: 1 } }, { 'a/b': 2, a: { b: 1 } }).changes, [
    { op: 'change', path: '/a~1b', before: 1, after: 2 },
  ]);
});

test('past the listing limit every change is still counted', () => {
  const before = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, i]));
  const after = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, -i - 1]));
  const diff = jsonDiff(before, after);
  assert.equal(diff.changes.length, MAX_LISTED_PATHS);
  assert.equal(diff.total, 2000);
  assert.equal(jsonDiff(before, after, 3).changes.length, 3);
});

test('a change beyond prose is listed before a thousand edited descriptions (attack round 28, F2)', () => {
  const props = (edit: boolean, max: number) => ({
    ...Object.fromEntries(
      Array.from({ length: 1100 }, (_, i) => [
        `a${String(i).padStart(4, '0')}`,
        { type: 'string', description: edit ? `edited ${i}` : `field ${i}` },
      ]),
    ),
    amount: { type: 'integer', maximum: max },
    // A property named like a prose keyword is a property: its constraint is not prose.
    description: { type: 'string', maxLength: max },
  });
  const before = { input_schema: { properties: props(false, 100) } };
  const after = { input_schema: { properties: props(true, 1_000_000_000) } };
  const diff = jsonDiff(before, after);
  assert.equal(diff.total, 1102);
  assert.deepEqual(
    diff.changes.slice(0, 2).map((c) => c.path),
    ['/input_schema/properties/amount/maximum', '/input_schema/properties/description/maxLength'],
  );
  assert.equal(diff.changes.length, MAX_LISTED_PATHS);
  assert.equal(diff.unlistedBeyondProse, 0, 'what is left out is only prose');
  // The benign neighbour: with room for all, every change is listed, weighty ones first.
  assert.equal(jsonDiff(before, after, 2000).changes.length, 1102);
  // Past the limit with weighty changes alone, the page can say how many it leaves out.
  const many = jsonDiff(
    { p: Array.from({ length: 600 }, () => 1) },
    { p: Array.from({ length: 600 }, () => 2) },
  );
  assert.equal(many.unlistedBeyondProse, 100);
});

test('a flood of the same constraint edit is one entry, and the definition’s own fields come first (attack round 29, F2)', () => {
  const props = (maxLength: number, max: number) => ({
    ...Object.fromEntries(
      Array.from({ length: 1200 }, (_, i) => [
        `a${String(i).padStart(4, '0')}`,
        { type: 'string', maxLength },
      ]),
    ),
    amount: { type: 'integer', maximum: max },
  });
  const before = {
    input_schema: { properties: props(100, 100) },
    required_capabilities: ['pay:out'],
  };
  const after = {
    input_schema: { properties: props(101, 1_000_000_000) },
    required_capabilities: ['ws:use'],
  };
  const diff = jsonDiff(before, after);
  assert.equal(diff.total, 1202);
  assert.deepEqual(diff.changes, [
    { op: 'change', path: '/required_capabilities/0', before: 'pay:out', after: 'ws:use' },
    {
      op: 'change',
      path: '/input_schema/properties/*/maxLength',
      before: 100,
      after: 101,
      repeated: 1200,
    },
    {
      op: 'change',
      path: '/input_schema/properties/amount/maximum',
      before: 100,
      after: 1_000_000_000,
    },
  ]);
  assert.equal(diff.unlistedBeyondProse, 0);
  // Added members are each named, even alike: a new property's name is what a reviewer reads.
  const added = jsonDiff(
    { input_schema: { properties: {} } },
    { input_schema: { properties: { a: { type: 'string' }, b: { type: 'string' } } } },
  );
  assert.deepEqual(
    added.changes.map((c) => [c.path, c.repeated]),
    [
      ['/input_schema/properties/a', undefined],
      ['/input_schema/properties/b', undefined],
    ],
  );
  // Different edits are not folded together: each distinct one is its own entry.
  const distinct = jsonDiff(
    { input_schema: { properties: { a: { maxLength: 1 }, b: { maxLength: 2 } } } },
    { input_schema: { properties: { a: { maxLength: 5 }, b: { maxLength: 6 } } } },
  );
  assert.deepEqual(
    distinct.changes.map((c) => [c.path, c.repeated]),
    [
      ['/input_schema/properties/a/maxLength', undefined],
      ['/input_schema/properties/b/maxLength', undefined],
    ],
  );
});

test('a deeply nested value is walked without recursion', () => {
  let before: unknown = 1;
  let after: unknown = 2;
  for (let i = 0; i < 50_000; i++) {
    before = { c: before };
    after = { c: after };
  }
  const diff = jsonDiff(before, after);
  assert.equal(diff.total, 1);
  assert.equal(diff.changes[0]?.path.length, '/c'.length * 50_000);
});
