/**
 * Approval tokens: only the exact call a reviewer approved, within its lifetime, verifies; every
 * other token is refused with the reason the gate reports.
 */
import assert from 'node:assert/strict';
import { createPrivateKey, generateKeyPairSync, sign } from 'node:crypto';
import { describe, test } from 'node:test';
import { canonicalJson } from '../../src/core/index.js';
import {
  APPROVAL_TOKEN_MAX_LENGTH,
  type ApprovalBinding,
  type ApprovalClaims,
  ApprovalSigner,
  argumentsHash,
} from '../../src/domain/decisions/index.js';

const NOW = new Date('2026-03-01T12:00:00Z');
const NOW_S = NOW.getTime() / 1000;
const ARGS = { amount: 120, currency: 'EUR', order: { id: 'o-1', lines: [1, 2] } };

const binding: ApprovalBinding = {
  approvalId: 'apr_01',
  toolId: 'billing.refund',
  toolVersion: '1.2.0',
  agentId: 'support-bot',
  sessionId: 'sess_42',
  argsHash: argumentsHash(ARGS),
};

const signer = ApprovalSigner.generate();

function at(secondsFromNow: number): Date {
  return new Date(NOW.getTime() + secondsFromNow * 1000);
}

function issued(ttl = 300) {
  return signer.issue(binding, ttl, NOW);
}

function reason(token: unknown, expected: ApprovalBinding = binding, now: Date = NOW): string {
  const result = signer.verify(token, expected, now);
  return result.ok ? 'ok' : result.reason;
}

function b64u(text: string | Buffer): string {
  return Buffer.from(text).toString('base64url');
}

function payloadOf(token: string): string {
  return Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8');
}

/** Signs arbitrary payload bytes with the real key: what a bug in our own issuer could produce. */
function signedWithOurKey(payload: string | Buffer): string {
  const key = createPrivateKey(signer.toPem());
  const p = b64u(payload);
  return `tga1.${p}.${sign(null, Buffer.from(`tga1.${p}`), key).toString('base64url')}`;
}

/** The claims as JSON with toolId moved to the front: same data, other bytes. */
function toolIdFirst(claims: ApprovalClaims): string {
  const { toolId, ...rest } = claims;
  return JSON.stringify({ toolId, ...rest });
}

describe('issuing', () => {
  test('a fresh token verifies for the call it was issued for and returns its claims', () => {
    const { token, claims } = issued(300);
    const result = signer.verify(token, binding, NOW);
    assert.deepEqual(result, { ok: true, claims });
    assert.equal(claims.issuedAt, NOW_S);
    assert.equal(claims.expiresAt, NOW_S + 300);
    assert.deepEqual(
      { ...claims, tokenId: undefined, issuedAt: 0, expiresAt: 0 },
      {
        ...binding,
        tokenId: undefined,
        issuedAt: 0,
        expiresAt: 0,
      },
    );
  });

  test('the token is tga1.<payload>.<signature> with canonical JSON claims', () => {
    const { token, claims } = issued();
    const [prefix, payload, sig] = token.split('.');
    assert.equal(prefix, 'tga1');
    assert.equal(token.split('.').length, 3);
    assert.equal(Buffer.from(sig ?? '', 'base64url').length, 64);
    const json = Buffer.from(payload ?? '', 'base64url').toString('utf8');
    assert.deepEqual(JSON.parse(json), claims);
    assert.ok(json.startsWith('{"agentId":'), 'keys are sorted');
  });

  test('every token gets its own 128-bit token id', () => {
    const ids = new Set(Array.from({ length: 200 }, () => issued().claims.tokenId));
    assert.equal(ids.size, 200);
    for (const id of ids) assert.equal(Buffer.from(id, 'base64url').length, 16);
  });

  test('ttl must be a whole number of seconds from 1 to 3600', () => {
    assert.doesNotThrow(() => signer.issue(binding, 1, NOW));
    assert.doesNotThrow(() => signer.issue(binding, 3600, NOW));
    for (const ttl of [0, -1, 3601, 86_400, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(() => signer.issue(binding, ttl, NOW), RangeError, `ttl ${ttl}`);
    }
  });

  test('an empty or non-string binding field is refused at issue', () => {
    for (const field of Object.keys(binding) as (keyof ApprovalBinding)[]) {
      assert.throws(() => signer.issue({ ...binding, [field]: '' }, 60, NOW), TypeError);
      const wrong = { ...binding, [field]: 7 } as unknown as ApprovalBinding;
      assert.throws(() => signer.issue(wrong, 60, NOW), TypeError);
    }
    assert.throws(() => signer.issue({ ...binding, sessionId: 'x'.repeat(257) }, 60, NOW));
  });

  test('extra properties on the binding are not signed', () => {
    const withExtra = { ...binding, admin: true } as ApprovalBinding;
    const { token } = signer.issue(withExtra, 60, NOW);
    assert.equal(JSON.parse(payloadOf(token)).admin, undefined);
  });

  test('an invalid date is refused, not turned into a token', () => {
    assert.throws(() => signer.issue(binding, 60, new Date(Number.NaN)), TypeError);
    assert.throws(() => signer.verify(issued().token, binding, new Date(Number.NaN)), TypeError);
  });

  test('the private key never appears in JSON or string form of the signer', () => {
    const pem = signer.toPem();
    assert.equal(JSON.stringify(signer), '{}');
    assert.ok(!String(signer).includes(pem));
  });
});

describe('keys', () => {
  test('a signer loaded from its PEM verifies tokens the original issued, and vice versa', () => {
    const pem = signer.toPem();
    assert.match(pem, /^-----BEGIN PRIVATE KEY-----\n/);
    const loaded = ApprovalSigner.fromPem(pem);
    const { token } = issued();
    assert.equal(loaded.verify(token, binding, NOW).ok, true);
    assert.equal(signer.verify(loaded.issue(binding, 60, NOW).token, binding, NOW).ok, true);
  });

  test('fromPem refuses other key types, public keys and garbage, never echoing them', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const edPublic = generateKeyPairSync('ed25519').publicKey;
    const inputs = [
      rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      ec.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      edPublic.export({ type: 'spki', format: 'pem' }).toString(),
      'not a key SECRET-MARKER',
      '',
    ];
    for (const input of inputs) {
      assert.throws(
        () => ApprovalSigner.fromPem(input),
        (err: Error) => err instanceof TypeError && !err.message.includes('SECRET-MARKER'),
      );
    }
  });

  test('a token from another signer is a bad signature, even for the same binding', () => {
    const other = ApprovalSigner.generate();
    const { token } = other.issue(binding, 300, NOW);
    assert.equal(reason(token), 'bad_signature');
  });
});

describe('verification failures', () => {
  test('expired: refused from expiresAt + 5 s on, accepted the second before', () => {
    const { token } = issued(60);
    assert.equal(reason(token, binding, at(60 + 4)), 'ok');
    assert.equal(reason(token, binding, at(60 + 5)), 'expired');
    assert.equal(reason(token, binding, at(86_400)), 'expired');
  });

  test('not_yet_valid: a token issued more than 5 s in the verifier’s future', () => {
    const { token } = issued(60);
    assert.equal(reason(token, binding, at(-5)), 'ok');
    assert.equal(reason(token, binding, at(-6)), 'not_yet_valid');
  });

  const mismatches: [keyof ApprovalBinding, string][] = [
    ['toolId', 'wrong_tool'],
    ['toolVersion', 'wrong_version'],
    ['agentId', 'wrong_agent'],
    ['sessionId', 'wrong_session'],
    ['approvalId', 'wrong_approval'],
    ['argsHash', 'arguments_changed'],
  ];
  for (const [field, expected] of mismatches) {
    test(`${expected}: the call differs in ${field}`, () => {
      const { token } = issued();
      assert.equal(reason(token, { ...binding, [field]: `${binding[field]}x` }), expected);
    });
  }

  test('arguments_changed when the arguments hash of the actual call differs', () => {
    const { token } = issued();
    const changed = argumentsHash({ ...ARGS, amount: 12_000 });
    assert.equal(reason(token, { ...binding, argsHash: changed }), 'arguments_changed');
    const reordered = argumentsHash({
      order: { lines: [1, 2], id: 'o-1' },
      currency: 'EUR',
      amount: 120.0,
    });
    assert.equal(reason(token, { ...binding, argsHash: reordered }), 'ok');
  });

  test('the first mismatch wins: tool, version, agent, session, approval, args', () => {
    const { token } = issued();
    const allWrong = Object.fromEntries(
      Object.entries(binding).map(([k, v]) => [k, `${v}x`]),
    ) as unknown as ApprovalBinding;
    assert.equal(reason(token, allWrong), 'wrong_tool');
    assert.equal(reason(token, { ...allWrong, toolId: binding.toolId }), 'wrong_version');
    assert.equal(
      reason(token, { ...binding, argsHash: 'sha256:00', approvalId: 'other' }),
      'wrong_approval',
    );
  });

  test('the signature is checked before time and binding', () => {
    const other = ApprovalSigner.generate();
    const { token } = other.issue({ ...binding, toolId: 'x' }, 60, NOW);
    assert.equal(reason(token, binding, at(10_000)), 'bad_signature');
  });

  test('time is checked before binding', () => {
    const { token } = issued(60);
    assert.equal(reason(token, { ...binding, toolId: 'other' }, at(10_000)), 'expired');
  });
});

describe('tampered and hostile tokens', () => {
  test('non-strings and empty or oversized strings are malformed', () => {
    const { token } = issued();
    for (const input of [
      undefined,
      null,
      42,
      {},
      [token],
      Buffer.from(token),
      '',
      ' ',
      `${token}${'A'.repeat(APPROVAL_TOKEN_MAX_LENGTH)}`,
    ]) {
      assert.equal(reason(input), 'malformed');
    }
  });

  test('a wrong segment count or prefix is malformed', () => {
    const { token } = issued();
    const [, payload, sig] = token.split('.');
    for (const input of [
      `tga1.${payload}`,
      `tga1.${payload}.${sig}.`,
      `tga1.${payload}.${sig}.${sig}`,
      `.${payload}.${sig}`,
      `tga2.${payload}.${sig}`,
      `TGA1.${payload}.${sig}`,
      ` tga1.${payload}.${sig}`,
      `${token}\n`,
      `tga1..${sig}`,
      `tga1.${payload}.`,
      'tga1..',
      '..',
    ]) {
      assert.equal(reason(input), 'malformed', input);
    }
  });

  test('alg-none style tricks: no header to downgrade, no empty or zero signature accepted', () => {
    const { token } = issued();
    const [, payload, sig] = token.split('.');
    const jwtNone = `${b64u('{"alg":"none","typ":"JWT"}')}.${payload}.`;
    const jwtEdDsa = `${b64u('{"alg":"EdDSA"}')}.${payload}.${sig}`;
    assert.equal(reason(jwtNone), 'malformed');
    assert.equal(reason(jwtEdDsa), 'malformed');
    assert.equal(reason(`none.${payload}.${sig}`), 'malformed');
    assert.equal(reason(`tga1.${payload}.${b64u('')}`), 'malformed');
    assert.equal(reason(`tga1.${payload}.${b64u(Buffer.alloc(64))}`), 'bad_signature');
    assert.equal(reason(`tga1.${payload}.${b64u(Buffer.alloc(64, 0xff))}`), 'bad_signature');
    // A signature of the payload alone (without the "tga1." prefix) does not count.
    const key = createPrivateKey(signer.toPem());
    const bare = sign(null, Buffer.from(payload ?? ''), key);
    assert.equal(reason(`tga1.${payload}.${b64u(bare)}`), 'bad_signature');
  });

  test('truncated and extended tokens never verify', () => {
    const { token } = issued();
    for (let cut = 1; cut < token.length; cut += 7) {
      assert.notEqual(reason(token.slice(0, token.length - cut)), 'ok');
      assert.notEqual(reason(token.slice(cut)), 'ok');
    }
    for (const tail of ['A', 'AA', 'AAA', 'AAAA', '=', '==', '.', '.A', '%00', '\u0000']) {
      assert.equal(reason(`${token}${tail}`), 'malformed', JSON.stringify(tail));
    }
    const [, payload, sig] = token.split('.');
    assert.notEqual(reason(`tga1.${payload}AAAA.${sig}`), 'ok');
    assert.notEqual(reason(`tga1.AAAA${payload}.${sig}`), 'ok');
  });

  test('a re-encoded token (standard base64, padding, non-canonical bits) is malformed', () => {
    const { token } = issued();
    const [, payload = '', sig = ''] = token.split('.');
    const std = (s: string) => Buffer.from(s, 'base64url').toString('base64');
    assert.equal(reason(`tga1.${std(payload)}.${std(sig)}`), 'malformed');
    assert.equal(reason(`tga1.${payload}.${sig}==`), 'malformed');
    assert.equal(reason(`tga1.${payload}=.${sig}`), 'malformed');
    // The signature is 64 bytes = 86 chars with 4 unused trailing bits; setting them decodes to
    // the same bytes, which Node accepts silently. We must not.
    const last = sig.charAt(sig.length - 1);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sibling = alphabet.charAt(alphabet.indexOf(last) ^ 1);
    const twin = `tga1.${payload}.${sig.slice(0, -1)}${sibling}`;
    assert.deepEqual(
      Buffer.from(twin.split('.')[2] ?? '', 'base64url'),
      Buffer.from(sig, 'base64url'),
    );
    assert.equal(reason(twin), 'malformed');
    // Characters outside the alphabet that Node's decoder would skip.
    assert.equal(reason(`tga1.${payload.slice(0, 10)} ${payload.slice(10)}.${sig}`), 'malformed');
    assert.equal(reason(`tga1.${payload}.${sig.slice(0, 40)}\n${sig.slice(40)}`), 'malformed');
  });

  test('re-ordered claims JSON keeps the old signature and so fails as bad_signature', () => {
    const { token, claims } = issued();
    const sig = token.split('.')[2];
    const reordered = toolIdFirst(claims);
    const spaced = JSON.stringify(claims, null, 1);
    assert.notEqual(reordered, payloadOf(token));
    assert.equal(reason(`tga1.${b64u(reordered)}.${sig}`), 'bad_signature');
    assert.equal(reason(`tga1.${b64u(spaced)}.${sig}`), 'bad_signature');
  });

  test('swapping payloads between two genuine tokens is a bad signature', () => {
    const a = issued().token.split('.');
    const b = signer.issue({ ...binding, toolId: 'billing.void' }, 60, NOW).token.split('.');
    assert.equal(reason(`tga1.${b[1]}.${a[2]}`), 'bad_signature');
  });

  test('a widened payload (a day longer) with the original signature is a bad signature', () => {
    const { token, claims } = issued(60);
    const sig = token.split('.')[2];
    const widened = canonicalJson({ ...claims, expiresAt: claims.expiresAt + 86_400 });
    assert.equal(reason(`tga1.${b64u(widened)}.${sig}`, binding, at(3600)), 'bad_signature');
  });
});

describe('signed by our own key but not a well-formed claim set (defence in depth)', () => {
  const { claims } = issued();
  const canonical = canonicalJson;

  test('the crafting helper itself produces a verifying token from canonical claims', () => {
    assert.equal(reason(signedWithOurKey(canonical(claims))), 'ok');
  });

  const cases: [string, string | Buffer][] = [
    ['non-canonical key order', toolIdFirst(claims)],
    ['whitespace', JSON.stringify(claims, null, 2)],
    ['a leading byte-order mark', `\uFEFF${canonical(claims)}`],
    ['invalid UTF-8', Buffer.concat([Buffer.from(canonical(claims)), Buffer.from([0xff])])],
    ['not JSON', 'hello'],
    ['an array', canonical([claims])],
    ['null', 'null'],
    ['a missing field', canonical({ ...claims, sessionId: undefined })],
    ['an extra field', canonical({ ...claims, scope: 'all' })],
    ['a numeric string time', canonical({ ...claims, issuedAt: String(claims.issuedAt) })],
    ['a fractional time', canonical({ ...claims, expiresAt: claims.expiresAt + 0.5 })],
    ['a ttl over an hour', canonical({ ...claims, expiresAt: claims.issuedAt + 3601 })],
    ['expiry before issue', canonical({ ...claims, expiresAt: claims.issuedAt - 1 })],
    ['an empty binding field', canonical({ ...claims, agentId: '' })],
    ['a non-string binding field', canonical({ ...claims, toolVersion: 1 })],
    ['a short token id', canonical({ ...claims, tokenId: 'abc' })],
    ['a duplicated key', canonical(claims).replace('{', `{"agentId":"someone-else",`)],
  ];
  for (const [name, payload] of cases) {
    test(`${name} is malformed`, () => {
      assert.equal(reason(signedWithOurKey(payload)), 'malformed');
    });
  }
});

describe('argumentsHash', () => {
  test('key order and number spelling do not change the hash', () => {
    assert.equal(argumentsHash({ a: 1, b: 2 }), argumentsHash({ b: 2, a: 1 }));
    assert.equal(argumentsHash({ n: 1 }), argumentsHash(JSON.parse('{"n":1.0}')));
    assert.equal(
      argumentsHash({ n: 1e21 }),
      argumentsHash(JSON.parse('{"n":1000000000000000000000}')),
    );
    assert.match(argumentsHash({}), /^sha256:[0-9a-f]{64}$/);
  });

  test('any other change does', () => {
    const base = argumentsHash({ a: 1, b: [1, 2], c: { d: 'x' } });
    for (const variant of [
      { a: 1, b: [1, 2] },
      { a: 1, b: [1, 2], c: { d: 'x' }, e: null },
      { a: '1', b: [1, 2], c: { d: 'x' } },
      { a: 1, b: [2, 1], c: { d: 'x' } },
      { a: 1, b: [1, 2], c: { d: 'X' } },
      { a: 1, b: [1, 2], c: { d: 'x ' } },
      { a: 1, b: [1, 2, null], c: { d: 'x' } },
      { a: true, b: [1, 2], c: { d: 'x' } },
      { A: 1, b: [1, 2], c: { d: 'x' } },
    ]) {
      assert.notEqual(argumentsHash(variant), base, JSON.stringify(variant));
    }
  });

  test('values that are not plain JSON data are refused instead of silently coerced', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const value of [
      undefined,
      { a: undefined },
      [undefined],
      { n: Number.NaN },
      { n: Number.POSITIVE_INFINITY },
      { d: new Date(0) },
      { m: new Map() },
      { f: () => 1 },
      { s: Symbol('x') },
      { b: 1n },
      // biome-ignore lint/suspicious/noSparseArray: the sparse array is the point of the case
      [1, , 3],
      cyclic,
      { s: '\uD800' },
    ]) {
      assert.throws(() => argumentsHash(value));
    }
  });

  test('a value shared by two keys (not a cycle) is fine', () => {
    const shared = { x: 1 };
    assert.equal(
      argumentsHash({ a: shared, b: shared }),
      argumentsHash({ a: { x: 1 }, b: { x: 1 } }),
    );
  });
});
