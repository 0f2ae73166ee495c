/**
 * Canonical JSON (src/core/canonical-json.ts) is the identity of every definition, approval token
 * and policy request: ours must write exactly what the `canonicalize` package (RFC 8785) writes,
 * and refuse exactly what it refuses, for any value — JSON values, and the odd ones a caller
 * might pass (undefined, symbols, functions, holes, toJSON, lone surrogates, NaN, cycles).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import canonicalizeImport from 'canonicalize';
import fc from 'fast-check';
import { canonicalHash, canonicalJson } from '../../src/core/index.js';

const reference = canonicalizeImport as unknown as (value: unknown) => string | undefined;

/** The package's answer, as ours gives it: the text, or the error's message. */
function expected(value: unknown): { text: string } | { error: string } {
  try {
    const text = reference(value);
    return text === undefined ? { error: 'value has no JSON representation' } : { text };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

function actual(value: unknown): { text: string } | { error: string } {
  try {
    return { text: canonicalJson(value) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

const odd = fc.oneof(
  fc.constant(undefined),
  fc.constant(Symbol('s')),
  fc.constant(() => 1),
  fc.constant(Number.NaN),
  fc.constant(Number.POSITIVE_INFINITY),
  fc.constant(-0),
  fc.constant({ toJSON: () => ({ b: 1, a: [2, 'x'] }) }),
  fc.constant(new Date(0)),
  fc.constant('\uD800'),
  fc.constant('a\uDC00b'),
  fc.constant('\uD83D\uDE00'),
);

const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ unit: 'binary' }),
    fc.string({ unit: 'grapheme' }),
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    odd,
    fc.array(tie('value'), { maxLength: 5 }),
    fc.sparseArray(tie('value'), { maxLength: 5 }),
    fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), tie('value'), { maxKeys: 6 }),
  ),
}));

test('writes and refuses exactly what the canonicalize package does, for any value', () => {
  fc.assert(
    fc.property(value, (v) => {
      assert.deepEqual(actual(v), expected(v));
    }),
    { numRuns: 5_000, seed: 20261207 },
  );
});

test('members sort by UTF-16 code units; numbers and escapes as RFC 8785 writes them', () => {
  assert.equal(
    canonicalJson({
      b: 1,
      a: { d: [1e21, 0.1, -0], c: 'é\u2028"' },
      '\uD83D\uDE00': 1,
      '\uFB33': 2,
    }),
    '{"a":{"c":"é\u2028\\"","d":[1e+21,0.1,0]},"b":1,"\uD83D\uDE00":1,"\uFB33":2}',
  );
  assert.equal(canonicalHash({ a: 1 }), canonicalHash({ a: 1 }));
  assert.notEqual(canonicalHash({ a: 1 }), canonicalHash({ a: '1' }));
});

test('a cycle, a lone surrogate, NaN and an infinity are refused, never written in part', () => {
  const cycle: Record<string, unknown> = { a: 1 };
  cycle.self = { back: cycle };
  assert.throws(() => canonicalJson(cycle), /Circular reference/);
  assert.throws(() => canonicalJson({ k: '\uD800' }), /Lone surrogate/);
  assert.throws(() => canonicalJson({ '\uDC00': 1 }), /Lone surrogate/);
  assert.throws(() => canonicalJson([Number.NaN]), /NaN/);
  assert.throws(() => canonicalJson({ x: Number.NEGATIVE_INFINITY }), /Infinity/);
  assert.throws(() => canonicalJson(undefined), /no JSON representation/);
  // The same object twice, not nested in itself, is no cycle.
  const shared = { z: 1 };
  assert.equal(canonicalJson({ a: shared, b: [shared] }), '{"a":{"z":1},"b":[{"z":1}]}');
});
