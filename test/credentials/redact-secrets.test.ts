/**
 * Scrubbing a tool's own secrets from its output (C11): the exact value and its common
 * encodings anywhere in a JSON value — strings, keys, numbers, nested — are masked and the result
 * is flagged; text that merely resembles a secret is left alone and not flagged.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { redactSecrets, SECRET_MASK } from '../../src/domain/credentials/index.js';

const SECRET = 'sk_live_Ab3/De+Fg=Hi "quoted" ü';

function occurs(value: unknown, needle: string): boolean {
  if (typeof value === 'string') return value.includes(needle);
  if (Array.isArray(value)) return value.some((v) => occurs(v, needle));
  if (typeof value === 'object' && value !== null)
    return Object.entries(value).some(([k, v]) => k.includes(needle) || occurs(v, needle));
  return false;
}

describe('redactSecrets', () => {
  const encodings: [string, string][] = [
    ['raw', SECRET],
    ['JSON-escaped', JSON.stringify(SECRET).slice(1, -1)],
    ['JSON with \\u escapes', JSON.stringify(SECRET).slice(1, -1).replace(/ü/g, '\\u00fc')],
    ['URL-encoded', encodeURIComponent(SECRET)],
    ['form-encoded', encodeURIComponent(SECRET).replace(/%20/g, '+')],
    [
      'URL-encoded, lower-case hex',
      encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    ],
    ['base64', Buffer.from(SECRET).toString('base64')],
    ['base64url', Buffer.from(SECRET).toString('base64url')],
    ['hex', Buffer.from(SECRET).toString('hex')],
  ];
  for (const [name, form] of encodings) {
    test(`the ${name} form is masked inside a longer string`, () => {
      const { value, redacted } = redactSecrets({ out: `before ${form} after` }, [SECRET]);
      assert.equal(redacted, true);
      assert.equal(occurs(value, form), false);
      assert.match((value as { out: string }).out, /^before .*\[REDACTED\].* after$/);
    });
  }

  test('base64 of a longer payload hides the secret at every byte alignment', () => {
    for (const prefix of ['', 'a', 'ab', 'abc', 'Authorization: Bearer ']) {
      const payload = Buffer.from(`${prefix}${SECRET}-and-more`).toString('base64');
      const { value, redacted } = redactSecrets(payload, [SECRET]);
      assert.equal(redacted, true, prefix);
      const decoded = Buffer.from(String(value).replaceAll(SECRET_MASK, ''), 'base64').toString(
        'latin1',
      );
      assert.equal(decoded.includes('sk_live_Ab3'), false, prefix);
    }
  });

  test('keys, numbers, arrays and deep nesting are covered; the input is not changed', () => {
    const input = {
      [SECRET]: 1,
      list: [[{ deep: [`x${SECRET}y`] }]],
      n: 12345678901,
      ok: 'nothing to see',
      flag: true,
      none: null,
    };
    const copy = structuredClone(input);
    const { value, redacted } = redactSecrets(input, [SECRET, '12345678901']);
    assert.equal(redacted, true);
    assert.equal(occurs(value, SECRET), false);
    const v = value as Record<string, unknown>;
    assert.equal(v.n, SECRET_MASK);
    assert.equal(v.ok, 'nothing to see');
    assert.equal(v.flag, true);
    assert.equal(v.none, null);
    assert.deepEqual(input, copy);
  });

  test('a benign neighbour is left alone and not flagged: similar text, a prefix, another secret', () => {
    const input = { a: 'sk_live_Ab3/De+Fg=Hi', b: SECRET.slice(0, -1), c: 'plain text' };
    const { value, redacted } = redactSecrets(input, [SECRET]);
    assert.equal(redacted, false);
    assert.deepEqual(value, input);
    assert.deepEqual(redactSecrets(input, []), { value: input, redacted: false });
  });

  test('a mask next to leftover text never spells the secret again', () => {
    const secret = 'DACTED]xyz123';
    const text = `[REDACTED]xyz123 and [RE${secret}xyz123`;
    const { value } = redactSecrets(text, [secret]);
    assert.equal(String(value).includes(secret), false);
  });

  test('a __proto__ key stays a key; masked keys that collide keep both values', () => {
    const key = (k: string) => JSON.stringify(k);
    const input = JSON.parse(
      `{"__proto__": ${JSON.stringify({ polluted: SECRET })}, ${key(`a${SECRET}`)}: 1, ${key(`a${encodeURIComponent(SECRET)}`)}: 2}`,
    );
    const { value } = redactSecrets(input, [SECRET]);
    const v = value as Record<string, unknown>;
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.getPrototypeOf(v), Object.prototype);
    assert.deepEqual(Object.keys(v), ['__proto__', 'a[REDACTED]', 'a[REDACTED]#2']);
    assert.equal(occurs(v, SECRET), false);
  });

  test('stderr and log text are plain strings and are scrubbed the same way', () => {
    const stderr = `Error: 401 from api with key=${encodeURIComponent(SECRET)}\n`;
    const { value, redacted } = redactSecrets(stderr, [SECRET]);
    assert.equal(redacted, true);
    assert.equal(value, `Error: 401 from api with key=${SECRET_MASK}\n`);
  });

  test('a value nested deeper than can be walked is masked whole and flagged', () => {
    let deep: unknown = SECRET;
    for (let i = 0; i < 400; i++) deep = [deep];
    const { value, redacted } = redactSecrets(deep, [SECRET]);
    assert.equal(redacted, true);
    assert.equal(JSON.stringify(value).includes('sk_live'), false);
  });
});
