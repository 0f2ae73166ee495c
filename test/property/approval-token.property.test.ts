/**
 * Properties of approval tokens that must hold for every input (fast-check): a token is bound to
 * exactly the arguments it was issued for, no single-character edit makes a token verify, and no
 * string at all makes verify throw or succeed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import {
  type ApprovalBinding,
  ApprovalSigner,
  argumentsHash,
} from '../../src/domain/decisions/index.js';
import { fc } from '../support/property.js';

const NOW = new Date('2026-03-01T12:00:00Z');
const signer = ApprovalSigner.generate();
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

function bindingFor(args: unknown): ApprovalBinding {
  return {
    approvalId: 'apr_1',
    toolId: 'billing.refund',
    toolVersion: '1.0.0',
    agentId: 'support-bot',
    sessionId: 'sess_1',
    argsHash: argumentsHash(args),
  };
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const argsArb: fc.Arbitrary<Record<string, Json>> = fc.dictionary(
  fc.string({ maxLength: 8 }),
  fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>,
  { maxKeys: 6 },
);

/** Equality as JSON sees it (so -0 and 0 are one value), independent of the code under test. */
function sameJson(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));
}

function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** The same value with every object's keys in reverse insertion order. */
function reorder(value: Json): Json {
  if (Array.isArray(value)) return value.map(reorder);
  if (value === null || typeof value !== 'object') return value;
  const out: { [key: string]: Json } = {};
  for (const key of Object.keys(value).reverse()) {
    Object.defineProperty(out, key, {
      value: reorder(value[key] ?? null),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

function containers(value: Json, found: (Json[] | { [key: string]: Json })[] = []) {
  if (value !== null && typeof value === 'object') {
    found.push(value);
    for (const child of Object.values(value)) containers(child, found);
  }
  return found;
}

/** A value of a different JSON type, so the change can never be a no-op. */
function retyped(value: Json): Json {
  if (value === null) return 0;
  if (Array.isArray(value)) return Object.fromEntries(value.map((v, i) => [String(i), v]));
  if (typeof value === 'object') return Object.values(value);
  if (typeof value === 'string') return [value];
  return String(value);
}

function setKey(target: { [key: string]: Json }, key: string, value: Json): void {
  // defineProperty, so a generated "__proto__" key is an own property as JSON.parse makes it.
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

type Mutation = 'add' | 'remove' | 'change' | 'retype';

function mutate(
  args: Record<string, Json>,
  kind: Mutation,
  seed: number,
  newValue: Json,
): Record<string, Json> {
  const copy = clone(args);
  const all = containers(copy);
  const target = all[seed % all.length] ?? copy;
  if (Array.isArray(target)) {
    const i = seed % Math.max(target.length, 1);
    if (kind === 'add' || target.length === 0) target.push(newValue);
    else if (kind === 'remove') target.splice(i, 1);
    else if (kind === 'change') target[i] = newValue;
    else target[i] = retyped(target[i] ?? null);
    return copy;
  }
  const keys = Object.keys(target);
  const key = keys[seed % Math.max(keys.length, 1)];
  if (kind === 'add' || key === undefined) {
    let fresh = 'added';
    while (Object.hasOwn(target, fresh)) fresh += '_';
    setKey(target, fresh, newValue);
  } else if (kind === 'remove') {
    delete target[key];
  } else if (kind === 'change') {
    setKey(target, key, newValue);
  } else {
    setKey(target, key, retyped(target[key] ?? null));
  }
  return copy;
}

test('a token verifies for exactly its arguments, whatever their key order', () => {
  fc.assert(
    fc.property(argsArb, (args) => {
      const { token } = signer.issue(bindingFor(args), 60, NOW);
      const same = reorder(args);
      assert.deepEqual(signer.verify(token, bindingFor(same), NOW).ok, true);
    }),
    { numRuns: 300 },
  );
});

test('adding, removing, changing or retyping anything at any depth voids the token', () => {
  fc.assert(
    fc.property(
      argsArb,
      fc.constantFrom<Mutation>('add', 'remove', 'change', 'retype'),
      fc.nat(),
      fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
      (args, kind, seed, newValue) => {
        const mutated = mutate(args, kind, seed, newValue);
        fc.pre(!sameJson(args, mutated));
        const { token } = signer.issue(bindingFor(args), 60, NOW);
        const result = signer.verify(token, bindingFor(mutated), NOW);
        assert.deepEqual(result, { ok: false, reason: 'arguments_changed' });
      },
    ),
    { numRuns: 500 },
  );
});

test('changing any one character of a token never makes it verify', () => {
  const replacement = fc.oneof(
    fc.constantFrom(...BASE64URL, '.', '=', '+', '/', ' '),
    fc.string({ minLength: 1, maxLength: 1, unit: 'binary' }),
  );
  fc.assert(
    fc.property(argsArb, fc.nat(), replacement, (args, at, ch) => {
      const binding = bindingFor(args);
      const { token } = signer.issue(binding, 60, NOW);
      const i = at % token.length;
      fc.pre(token[i] !== ch);
      const tampered = token.slice(0, i) + ch + token.slice(i + 1);
      assert.equal(signer.verify(tampered, binding, NOW).ok, false, `position ${i}`);
    }),
    { numRuns: 1000 },
  );
});

test('every one-bit change of every character of a token (as base64url digit) is refused', () => {
  const binding = bindingFor({ amount: 10 });
  const { token } = signer.issue(binding, 60, NOW);
  for (let i = 0; i < token.length; i++) {
    const digit = BASE64URL.indexOf(token.charAt(i));
    // The '.' separators are not digits; any digit in their place breaks the segment count.
    const alternatives =
      digit < 0 ? ['A', '_'] : [1, 2, 4, 8, 16, 32].map((bit) => BASE64URL.charAt(digit ^ bit));
    for (const ch of alternatives) {
      const tampered = token.slice(0, i) + ch + token.slice(i + 1);
      assert.equal(signer.verify(tampered, binding, NOW).ok, false, `position ${i} -> ${ch}`);
    }
  }
});

test('random strings and values never verify and never throw', () => {
  const binding = bindingFor({});
  const { token } = signer.issue(binding, 60, NOW);
  const [, payload = '', sig = ''] = token.split('.');
  const b64u = fc.string({ unit: fc.constantFrom(...BASE64URL), maxLength: 120 });
  const input = fc.oneof(
    fc.string(),
    fc.string({ unit: 'binary' }),
    fc.string({ unit: fc.constantFrom(...BASE64URL, '.'), maxLength: 300 }),
    fc.tuple(b64u, b64u).map(([p, s]) => `tga1.${p}.${s}`),
    b64u.map((s) => `tga1.${payload}.${s}`),
    b64u.map((p) => `tga1.${p}.${sig}`),
    fc
      .uint8Array({ minLength: 64, maxLength: 64 })
      .map((bytes) => `tga1.${payload}.${Buffer.from(bytes).toString('base64url')}`),
    fc.anything(),
  );
  fc.assert(
    fc.property(input, (candidate) => {
      const result = signer.verify(candidate, binding, NOW);
      assert.equal(result.ok, false);
    }),
    { numRuns: 2000 },
  );
});

test('a change to any one binding field is reported as that field', () => {
  const reasons = {
    toolId: 'wrong_tool',
    toolVersion: 'wrong_version',
    agentId: 'wrong_agent',
    sessionId: 'wrong_session',
    approvalId: 'wrong_approval',
    argsHash: 'arguments_changed',
  } as const;
  fc.assert(
    fc.property(
      argsArb,
      fc.constantFrom(...(Object.keys(reasons) as (keyof typeof reasons)[])),
      fc.string({ maxLength: 20 }),
      (args, field, other) => {
        const binding = bindingFor(args);
        fc.pre(other !== binding[field]);
        const { token } = signer.issue(binding, 60, NOW);
        const result = signer.verify(token, { ...binding, [field]: other }, NOW);
        assert.deepEqual(result, { ok: false, reason: reasons[field] });
      },
    ),
    { numRuns: 300 },
  );
});
