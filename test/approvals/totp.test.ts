/**
 * TOTP second factor: the RFC 4226 and RFC 6238 vectors, the ±1 step window, replay refusal and
 * exact six-ASCII-digit parsing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  generateTotpSecret,
  totpAt,
  totpUri,
  verifyTotp,
} from '../../src/domain/decisions/index.js';
import { decodeTotpSecret, hotp, totpStep } from '../../src/domain/decisions/totp.js';

const RFC_ASCII = '12345678901234567890';
/** RFC 4648 base32 of the RFC test secret. */
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const RFC_KEY = Buffer.from(RFC_ASCII, 'ascii');

const at = (seconds: number) => new Date(seconds * 1000);

describe('HOTP core against the RFC vectors', () => {
  test('RFC 4226 Appendix D: counters 0–9, 6 digits', () => {
    const expected = [
      '755224',
      '287082',
      '359152',
      '969429',
      '338314',
      '254676',
      '287922',
      '162583',
      '399871',
      '520489',
    ];
    expected.forEach((code, counter) => {
      assert.equal(hotp(RFC_KEY, counter, 6), code, `counter ${counter}`);
    });
  });

  // RFC 6238 Appendix B, SHA-1 rows. The RFC prints 8-digit codes; the default is 6.
  const rfc6238: [number, number, string][] = [
    [59, 0x1, '94287082'],
    [1111111109, 0x23523ec, '07081804'],
    [1111111111, 0x23523ed, '14050471'],
    [1234567890, 0x273ef07, '89005924'],
    [2000000000, 0x3f940aa, '69279037'],
    [20000000000, 0x27bc86aa, '65353130'],
  ];

  for (const [seconds, step, code] of rfc6238) {
    test(`RFC 6238 Appendix B at T=${seconds}: step ${step.toString(16)}, code ${code}`, () => {
      assert.equal(totpStep(at(seconds)), step);
      assert.equal(hotp(RFC_KEY, totpStep(at(seconds)), 8), code);
    });
    test(`the 6-digit default at T=${seconds} is ${code.slice(2)}`, () => {
      assert.equal(totpAt(RFC_SECRET, at(seconds)), code.slice(2));
    });
  }

  test('the base32 RFC secret decodes to the RFC ASCII secret', () => {
    assert.deepEqual(decodeTotpSecret(RFC_SECRET), RFC_KEY);
  });

  test('hotp refuses negative or fractional counters and unsupported digit counts', () => {
    for (const counter of [-1, 1.5, Number.NaN, 2 ** 53]) {
      assert.throws(() => hotp(RFC_KEY, counter, 6), RangeError);
    }
    for (const digits of [0, 5, 9, 6.5]) assert.throws(() => hotp(RFC_KEY, 0, digits), RangeError);
  });
});

describe('secrets', () => {
  test('a generated secret is 160 bits of unpadded RFC 4648 base32, different each time', () => {
    const secrets = new Set(Array.from({ length: 100 }, generateTotpSecret));
    assert.equal(secrets.size, 100);
    for (const secret of secrets) {
      assert.match(secret, /^[A-Z2-7]{32}$/);
      assert.equal(decodeTotpSecret(secret).length, 20);
    }
  });

  test('invalid secrets are refused, not silently decoded', () => {
    for (const secret of [
      '',
      RFC_SECRET.toLowerCase(),
      `${RFC_SECRET}====`,
      `${RFC_SECRET.slice(0, 16)} ${RFC_SECRET.slice(16)}`,
      `${RFC_SECRET.slice(0, 31)}0`,
      `${RFC_SECRET.slice(0, 31)}1`,
      `${RFC_SECRET.slice(0, 31)}8`,
      'GEZDGNBVGY3TQOJQ', // 80 bits: too short
      `${RFC_SECRET}A`, // length 33: not whole bytes
      `${RFC_SECRET}AB`, // 2 extra chars with non-zero leftover bits
    ]) {
      assert.throws(() => totpAt(secret, at(59)), TypeError, JSON.stringify(secret));
      assert.throws(() => verifyTotp(secret, '123456', at(59)), TypeError);
    }
    assert.throws(() => totpAt(42 as unknown as string, at(59)), TypeError);
  });
});

describe('totpUri', () => {
  test('is an otpauth key URI with issuer, algorithm, digits and period', () => {
    const uri = new URL(totpUri(RFC_SECRET, 'alice@example.com'));
    assert.equal(uri.protocol, 'otpauth:');
    assert.equal(uri.host, 'totp');
    assert.equal(decodeURIComponent(uri.pathname), '/toolgate:alice@example.com');
    assert.equal(uri.searchParams.get('secret'), RFC_SECRET);
    assert.equal(uri.searchParams.get('issuer'), 'toolgate');
    assert.equal(uri.searchParams.get('algorithm'), 'SHA1');
    assert.equal(uri.searchParams.get('digits'), '6');
    assert.equal(uri.searchParams.get('period'), '30');
  });

  test('percent-encodes the label and accepts another issuer', () => {
    const uri = totpUri(RFC_SECRET, 'Alice Smith/ops', 'Acme & Co');
    assert.ok(uri.startsWith('otpauth://totp/Acme%20%26%20Co:Alice%20Smith%2Fops?'), uri);
    assert.equal(new URL(uri).searchParams.get('issuer'), 'Acme & Co');
    assert.ok(uri.endsWith('&issuer=Acme%20%26%20Co&algorithm=SHA1&digits=6&period=30'), uri);
    assert.ok(!uri.includes('+'), 'spaces are %20, never +');
  });

  test('refuses colons and empty names, which break the label, and invalid secrets', () => {
    assert.throws(() => totpUri(RFC_SECRET, 'a:b'), TypeError);
    assert.throws(() => totpUri(RFC_SECRET, 'alice', 'x:y'), TypeError);
    assert.throws(() => totpUri(RFC_SECRET, ''), TypeError);
    assert.throws(() => totpUri('not base32!', 'alice'), TypeError);
  });
});

describe('verifyTotp', () => {
  const T = 1234567890;
  const now = at(T);
  const step = totpStep(now);
  const codeAtStep = (s: number) => hotp(RFC_KEY, s, 6);

  test('accepts the current code and returns its step', () => {
    assert.deepEqual(verifyTotp(RFC_SECRET, totpAt(RFC_SECRET, now), now), { ok: true, step });
  });

  test('accepts the previous and the next step, nothing further', () => {
    assert.deepEqual(verifyTotp(RFC_SECRET, codeAtStep(step - 1), now), {
      ok: true,
      step: step - 1,
    });
    assert.deepEqual(verifyTotp(RFC_SECRET, codeAtStep(step + 1), now), {
      ok: true,
      step: step + 1,
    });
    for (const far of [step - 2, step + 2, step - 10, step + 10]) {
      assert.deepEqual(verifyTotp(RFC_SECRET, codeAtStep(far), now), {
        ok: false,
        reason: 'invalid',
      });
    }
  });

  test('the window follows the clock: a code from 31 s ago still works, 61 s ago does not', () => {
    const start = step * 30;
    const code = codeAtStep(step);
    assert.equal(verifyTotp(RFC_SECRET, code, at(start + 29 + 30)).ok, true);
    assert.equal(verifyTotp(RFC_SECRET, code, at(start + 60)).ok, false);
  });

  test('a wrong code is invalid', () => {
    const wrong = String((Number(codeAtStep(step)) + 1) % 1_000_000).padStart(6, '0');
    assert.deepEqual(verifyTotp(RFC_SECRET, wrong, now), { ok: false, reason: 'invalid' });
  });

  test('a step at or below lastUsedStep is a replay; a later one is fine', () => {
    const code = codeAtStep(step);
    assert.deepEqual(verifyTotp(RFC_SECRET, code, now, step), { ok: false, reason: 'replayed' });
    assert.deepEqual(verifyTotp(RFC_SECRET, code, now, step + 1), {
      ok: false,
      reason: 'replayed',
    });
    assert.deepEqual(verifyTotp(RFC_SECRET, code, now, step - 1), { ok: true, step });
    // Once the next step's code has been used, the current step's code is dead too.
    assert.deepEqual(verifyTotp(RFC_SECRET, codeAtStep(step - 1), now, step - 1), {
      ok: false,
      reason: 'replayed',
    });
  });

  test('a code of the right shape that matches nothing is invalid even with lastUsedStep', () => {
    assert.deepEqual(verifyTotp(RFC_SECRET, codeAtStep(step + 5), now, step + 1), {
      ok: false,
      reason: 'invalid',
    });
  });

  test('codes with a leading zero are compared as text', () => {
    const t = at(1111111109);
    assert.equal(totpAt(RFC_SECRET, t), '081804');
    assert.equal(verifyTotp(RFC_SECRET, '081804', t).ok, true);
    assert.equal(verifyTotp(RFC_SECRET, '81804', t).ok, false);
    assert.deepEqual(verifyTotp(RFC_SECRET, 81804, t), { ok: false, reason: 'malformed' });
  });

  test('anything but exactly six ASCII digits is malformed', () => {
    const good = codeAtStep(step);
    for (const code of [
      '12345',
      '1234567',
      ' 123456',
      '123456 ',
      '123 456',
      '12345\n',
      '١٢٣٤٥٦', // Arabic-Indic digits
      '１２３４５６', // full-width digits
      '12345a',
      '+12345',
      '-12345',
      '1.2345',
      '1e5000',
      '',
      `${good}0`,
      Number(good),
      123456,
      1234567,
      null,
      undefined,
      [good],
      { code: good },
      Buffer.from(good),
      true,
    ]) {
      assert.deepEqual(
        verifyTotp(RFC_SECRET, code, now),
        { ok: false, reason: 'malformed' },
        JSON.stringify(code),
      );
    }
  });

  test('near the epoch there is no negative step to check, and nothing throws', () => {
    const early = at(10);
    assert.equal(verifyTotp(RFC_SECRET, totpAt(RFC_SECRET, early), early).ok, true);
    assert.equal(verifyTotp(RFC_SECRET, '000000', early).ok, false);
  });

  test('an invalid date or lastUsedStep throws rather than weakening the check', () => {
    const code = codeAtStep(step);
    assert.throws(() => verifyTotp(RFC_SECRET, code, new Date(Number.NaN)), TypeError);
    for (const last of [Number.NaN, 1.5, Number.POSITIVE_INFINITY]) {
      assert.throws(() => verifyTotp(RFC_SECRET, code, now, last), TypeError);
    }
  });
});
