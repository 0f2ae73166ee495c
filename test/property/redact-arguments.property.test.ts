/**
 * Property: the audit log's copy of a call's arguments never holds anything that was under a
 * secret-named key — whatever the value (string, number, list, object, nested any depth) and
 * wherever the key sits — while arguments with no secret-named key and no credential-shaped
 * string come back equal. Generated text is lowercase letters and spaces, which no credential
 * pattern can match, so the benign property holds by construction, not by luck.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MASK, redactArguments } from '../../src/gate/index.js';
import { fc } from '../support/property.js';

const text = fc.stringMatching(/^[a-z ]{0,12}$/);
const benignKey = fc.constantFrom('query', 'limit', 'items', 'name', 'note', 'filter', 'page');
const secretKey = fc.constantFrom(
  'token',
  'password',
  'api_key',
  'apiKey',
  'client_secret',
  'Authorization',
  'session_id',
  'private_key',
  'cookie',
);

const { value: benignValue } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(benignKey, tie('value'), { maxKeys: 4, noNullPrototype: true }),
  ),
}));

/** Any JSON value: what an agent may put under a secret-named key. */
const anyValue = fc.jsonValue({ maxDepth: 4 });

/** `inner` placed under `path` (object keys and array positions) in benign arguments. */
function nest(inner: Record<string, unknown>, path: readonly (string | number)[]): unknown {
  let out: unknown = inner;
  for (const step of [...path].reverse()) {
    out = typeof step === 'number' ? [...Array(step % 3).fill('pad'), out] : { [step]: out };
  }
  return out;
}

function at(value: unknown, path: readonly (string | number)[]): unknown {
  let out = value;
  for (const step of path) {
    if (typeof step === 'number') out = (out as unknown[])[step % 3];
    else out = (out as Record<string, unknown>)[step];
  }
  return out;
}

test('the whole value under a secret-named key is masked, at any depth', () => {
  fc.assert(
    fc.property(
      secretKey,
      anyValue.filter((v) => v !== null),
      fc.array(fc.oneof(benignKey, fc.nat({ max: 5 })), { maxLength: 5 }),
      (key, secret, path) => {
        const args = nest({ [key]: secret, query: 'refund' }, path);
        const redacted = at(redactArguments(args), path) as Record<string, unknown>;
        assert.equal(redacted[key], MASK);
        assert.equal(redacted.query, 'refund');
      },
    ),
    { numRuns: 300 },
  );
});

test('arguments without secret-named keys or credential-shaped strings are kept as they are', () => {
  fc.assert(
    fc.property(benignValue, (args) => {
      assert.deepEqual(redactArguments(args), args);
    }),
    { numRuns: 300 },
  );
});
