import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkSizes } from '../../src/domain/policy/index.js';
import { fc } from '../support/property.js';

const roomy = { maxArgumentBytes: 1_000, maxCallBytes: 10_000 };

describe('checkSizes', () => {
  test('the whole call is measured as UTF-8 bytes of its JSON text', () => {
    const args = { text: 'héllo', n: 1 };
    const bytes = Buffer.byteLength(JSON.stringify(args), 'utf8');
    assert.deepEqual(checkSizes(args, roomy), { ok: true, value: { bytes } });
    assert.equal(bytes, JSON.stringify(args).length + 1);
  });

  test('an argument exactly at the limit is allowed; one byte more is refused, naming it', () => {
    const limits = { maxArgumentBytes: 12, maxCallBytes: 10_000 };
    // '"aaaaaaaaaa"' is 12 bytes.
    assert.ok(checkSizes({ body: 'a'.repeat(10) }, limits).ok);
    const verdict = checkSizes({ small: 1, body: 'a'.repeat(11) }, limits);
    assert.equal(verdict.ok, false);
    if (!verdict.ok) {
      assert.equal(verdict.rule, 'size.argument');
      assert.match(verdict.message, /"body"/);
      assert.match(verdict.message, /13 bytes/);
    }
  });

  test('multi-byte characters count as their UTF-8 length, not as characters', () => {
    const limits = { maxArgumentBytes: 10, maxCallBytes: 10_000 };
    // 3 euro signs: 9 bytes of UTF-8 plus 2 quotes = 11.
    const verdict = checkSizes({ price: '€€€' }, limits);
    assert.equal(verdict.ok, false);
    if (!verdict.ok) assert.equal(verdict.rule, 'size.argument');
  });

  test('small arguments that add up past the call limit are refused as size.call', () => {
    const limits = { maxArgumentBytes: 100, maxCallBytes: 50 };
    const args = { a: 'x'.repeat(20), b: 'y'.repeat(20), c: 'z'.repeat(20) };
    const verdict = checkSizes(args, limits);
    assert.equal(verdict.ok, false);
    if (!verdict.ok) assert.equal(verdict.rule, 'size.call');
  });

  test('an argument name in a message is quoted at most 100 characters long', () => {
    const name = 'n'.repeat(5_000);
    const verdict = checkSizes(
      { [name]: 'x'.repeat(50) },
      { maxArgumentBytes: 10, maxCallBytes: 1e9 },
    );
    assert.equal(verdict.ok, false);
    if (!verdict.ok) assert.ok(!verdict.message.includes('n'.repeat(101)));
  });

  test('a limit that is not a number refuses instead of allowing everything', () => {
    const verdict = checkSizes({ a: 1 }, { maxArgumentBytes: Number.NaN, maxCallBytes: 100 });
    assert.equal(verdict.ok, false);
    const call = checkSizes({ a: 1 }, { maxArgumentBytes: 100, maxCallBytes: Number.NaN });
    assert.equal(call.ok, false);
  });

  test('non-object arguments are measured as a whole', () => {
    assert.deepEqual(checkSizes('abc', roomy), { ok: true, value: { bytes: 5 } });
    assert.deepEqual(checkSizes([1, 2], roomy), { ok: true, value: { bytes: 5 } });
    assert.deepEqual(checkSizes(null, roomy), { ok: true, value: { bytes: 4 } });
  });

  test('values JSON cannot serialize are refused, never thrown', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const top = checkSizes(cyclic, roomy);
    assert.equal(top.ok, false);
    if (!top.ok) assert.equal(top.rule, 'size.argument');
    const big = checkSizes({ n: 10n }, roomy);
    assert.equal(big.ok, false);
    let deep: unknown = 'x';
    for (let i = 0; i < 200_000; i += 1) deep = [deep];
    assert.equal(checkSizes(deep, roomy).ok, false);
  });

  test('any JSON value is answered, never thrown at, and an allowed size is exact', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(2_000), fc.nat(5_000), (value, perArg, perCall) => {
        const verdict = checkSizes(value, { maxArgumentBytes: perArg, maxCallBytes: perCall });
        if (verdict.ok) {
          assert.equal(verdict.value.bytes, Buffer.byteLength(JSON.stringify(value), 'utf8'));
          assert.ok(verdict.value.bytes <= perCall);
        } else {
          assert.ok(verdict.rule === 'size.argument' || verdict.rule === 'size.call');
        }
      }),
      { numRuns: 500 },
    );
  });
});
