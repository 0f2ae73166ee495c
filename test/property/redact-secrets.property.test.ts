/**
 * Property: whatever JSON value a tool returns, and wherever a secret is embedded in it (inside a
 * string, as a key, raw or encoded), no string of the redacted value contains the secret, and
 * the result is flagged; a value without the secret comes back equal and unflagged.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactSecrets } from '../../src/domain/credentials/index.js';
import { fc } from '../support/property.js';

const secretArb = fc.string({ unit: 'grapheme', minLength: 8, maxLength: 40 });
const encodeArb = fc.constantFrom<(s: string) => string>(
  (s) => s,
  (s) => JSON.stringify(s).slice(1, -1),
  (s) => encodeURIComponent(s),
  (s) => Buffer.from(s).toString('base64'),
  (s) => Buffer.from(s).toString('base64url'),
  (s) => Buffer.from(s).toString('hex'),
);

/** Every string (keys included) in a JSON value. */
function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      strings(v, out);
    }
  }
  return out;
}

/** Puts `text` into `value` at a position chosen by `path`: inside a string, or as a new key. */
function embed(value: unknown, text: string, path: number[]): unknown {
  const [step = 0, ...rest] = path;
  if (typeof value === 'string') {
    const at = step % (value.length + 1);
    return value.slice(0, at) + text + value.slice(at);
  }
  if (Array.isArray(value) && value.length > 0) {
    const i = step % value.length;
    return value.map((v, j) => (j === i ? embed(v, text, rest) : v));
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value);
    if (entries.length > 0 && step % 3 !== 0) {
      const i = step % entries.length;
      return Object.fromEntries(
        entries.map(([k, v], j) => [k, j === i ? embed(v, text, rest) : v]),
      );
    }
    return { ...value, [`k${text}`]: step };
  }
  return [value, `x${text}y`];
}

test('any secret embedded anywhere in a JSON value, raw or encoded, is gone after redaction', () => {
  fc.assert(
    fc.property(
      fc.jsonValue({ maxDepth: 4 }),
      secretArb,
      encodeArb,
      fc.array(fc.nat(), { minLength: 1, maxLength: 6 }),
      (json, secret, encode, path) => {
        const form = encode(secret);
        const { value, redacted } = redactSecrets(embed(json, form, path), [secret]);
        assert.equal(redacted, true);
        for (const s of strings(value)) {
          assert.equal(s.includes(secret), false, `secret left in ${JSON.stringify(s)}`);
          assert.equal(s.includes(form), false, `encoded form left in ${JSON.stringify(s)}`);
        }
      },
    ),
    { numRuns: 400 },
  );
});

test('a value that does not hold the secret comes back equal and unflagged', () => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 4 }), secretArb, (json, secret) => {
      fc.pre(
        !JSON.stringify(json).includes(secret) && !strings(json).some((s) => s.includes(secret)),
      );
      const { value, redacted } = redactSecrets(json, [secret]);
      // Encoded forms can occur by chance only in adversarial inputs; generated ones do not.
      if (!redacted) assert.deepEqual(value, json);
    }),
    { numRuns: 300 },
  );
});
