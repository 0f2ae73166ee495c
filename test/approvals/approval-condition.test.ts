/**
 * Conditional approval: a tool's rule decides from the call's arguments, and every case the rule
 * cannot decide asks for approval.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ApprovalCondition as CatalogCondition } from '../../src/domain/catalog/tool-definition.js';
import { type ApprovalCondition, approvalRequired } from '../../src/domain/decisions/index.js';

// The catalog and the approvals folder describe the same rule; this fails to compile if they drift.
const toCatalog = (c: ApprovalCondition): CatalogCondition => c;
const fromCatalog = (c: CatalogCondition): ApprovalCondition => c;
void toCatalog;
void fromCatalog;

const over = (value: number): ApprovalCondition => ({ argument: '/amount', op: 'gt', value });

function required(conditions: readonly ApprovalCondition[] | undefined, args: unknown): boolean {
  return approvalRequired('conditional', conditions, args).required;
}

describe('modes', () => {
  test('none never asks, whatever the arguments or conditions', () => {
    assert.deepEqual(approvalRequired('none', [over(0)], { amount: 10 }), {
      required: false,
      matched: [],
    });
    assert.deepEqual(approvalRequired('none', undefined, undefined), {
      required: false,
      matched: [],
    });
  });

  test('always asks, whatever the arguments', () => {
    assert.deepEqual(approvalRequired('always', undefined, {}), { required: true, matched: [] });
    assert.deepEqual(approvalRequired('always', [over(1e9)], { amount: 1 }), {
      required: true,
      matched: [],
    });
  });

  test('conditional without conditions is a misconfiguration and asks', () => {
    assert.equal(required(undefined, { amount: 1 }), true);
    assert.equal(required([], { amount: 1 }), true);
  });

  test('an unknown mode asks', () => {
    const mode = 'sometimes' as unknown as 'none';
    assert.equal(approvalRequired(mode, undefined, {}).required, true);
  });
});

describe('operators', () => {
  const table: [ApprovalCondition['op'], number, boolean, boolean, boolean][] = [
    // op, threshold, holds for 99, for 100, for 101
    ['gt', 100, false, false, true],
    ['gte', 100, false, true, true],
    ['lt', 100, true, false, false],
    ['lte', 100, true, true, false],
    ['eq', 100, false, true, false],
    ['ne', 100, true, false, true],
  ];
  for (const [op, value, below, equal, above] of table) {
    test(`${op} ${value} on numbers`, () => {
      const cond: ApprovalCondition = { argument: '/amount', op, value };
      assert.equal(required([cond], { amount: 99 }), below);
      assert.equal(required([cond], { amount: 100 }), equal);
      assert.equal(required([cond], { amount: 101 }), above);
    });
  }

  test('a refund above the threshold asks, one at or below it does not', () => {
    const rule = [over(500)];
    assert.equal(required(rule, { amount: 500 }), false);
    assert.equal(required(rule, { amount: 500.01 }), true);
    assert.equal(required(rule, { amount: -1e9 }), false);
  });

  test('eq and ne on strings and booleans compare exactly', () => {
    const prod: ApprovalCondition = { argument: '/env', op: 'eq', value: 'prod' };
    assert.equal(required([prod], { env: 'prod' }), true);
    assert.equal(required([prod], { env: 'staging' }), false);
    assert.equal(required([prod], { env: 'Prod' }), false);
    const notDry: ApprovalCondition = { argument: '/dry_run', op: 'ne', value: true };
    assert.equal(required([notDry], { dry_run: true }), false);
    assert.equal(required([notDry], { dry_run: false }), true);
  });

  test('any condition holding is enough, and every holding condition is reported', () => {
    const big = over(1000);
    const prod: ApprovalCondition = { argument: '/env', op: 'eq', value: 'prod' };
    const foreign: ApprovalCondition = { argument: '/currency', op: 'ne', value: 'EUR' };
    const result = approvalRequired('conditional', [big, prod, foreign], {
      amount: 5000,
      env: 'staging',
      currency: 'USD',
    });
    assert.deepEqual(result, { required: true, matched: [big, foreign] });
    assert.deepEqual(
      approvalRequired('conditional', [big, prod], { amount: 1, env: 'dev', currency: 'EUR' }),
      { required: false, matched: [] },
    );
  });
});

describe('fails closed', () => {
  test('a missing argument asks', () => {
    assert.equal(required([over(100)], {}), true);
    assert.equal(required([over(100)], { amnt: 5 }), true);
    assert.equal(required([{ argument: '/dry_run', op: 'eq', value: false }], {}), true);
  });

  test('a type mismatch asks, for every operator', () => {
    for (const op of ['gt', 'gte', 'lt', 'lte', 'eq', 'ne'] as const) {
      const cond: ApprovalCondition = { argument: '/amount', op, value: 100 };
      for (const amount of ['5000', '1', true, null, [5000], { value: 1 }]) {
        assert.equal(required([cond], { amount }), true, `${op} vs ${JSON.stringify(amount)}`);
      }
    }
    const prod: ApprovalCondition = { argument: '/env', op: 'eq', value: 'prod' };
    assert.equal(required([prod], { env: 1 }), true);
    assert.equal(required([prod], { env: ['staging'] }), true);
    assert.equal(required([{ argument: '/f', op: 'eq', value: true }], { f: 'true' }), true);
  });

  test('ordering operators on strings and booleans cannot be decided and ask', () => {
    for (const op of ['gt', 'gte', 'lt', 'lte'] as const) {
      assert.equal(required([{ argument: '/s', op, value: 'm' }], { s: 'a' }), true);
      assert.equal(required([{ argument: '/b', op, value: true }], { b: false }), true);
    }
  });

  test('NaN and infinities ask, in the arguments or in the rule', () => {
    assert.equal(required([over(100)], { amount: Number.NaN }), true);
    assert.equal(
      required([{ argument: '/amount', op: 'lt', value: 100 }], { amount: Number.NaN }),
      true,
    );
    assert.equal(
      required([{ argument: '/amount', op: 'lt', value: 100 }], {
        amount: Number.NEGATIVE_INFINITY,
      }),
      true,
    );
    assert.equal(required([over(Number.NaN)], { amount: 1 }), true);
    assert.equal(
      required([{ argument: '/amount', op: 'ne', value: Number.NaN }], { amount: 1 }),
      true,
    );
  });

  test('an unknown operator or condition value type asks', () => {
    const badOp = { argument: '/amount', op: 'between', value: 1 } as unknown as ApprovalCondition;
    const badValue = { argument: '/amount', op: 'eq', value: null } as unknown as ApprovalCondition;
    assert.equal(required([badOp], { amount: 1 }), true);
    assert.equal(required([badValue], { amount: null }), true);
  });

  test('arguments that are not an object, or a pointer into a scalar, ask', () => {
    for (const args of [undefined, null, 5, 'amount', [], true]) {
      assert.equal(required([over(100)], args), true, JSON.stringify(args));
    }
    assert.equal(
      required([{ argument: '/amount/value', op: 'gt', value: 1 }], { amount: 5 }),
      true,
    );
  });

  test('malformed pointers ask', () => {
    for (const argument of ['amount', '#/amount', '/a~2b', '/a~', '/~', 42 as unknown as string]) {
      assert.equal(
        required([{ argument, op: 'ne', value: 0 }], { amount: 1, a: 1 }),
        true,
        String(argument),
      );
    }
  });

  test('inherited properties are not arguments', () => {
    for (const argument of ['/constructor', '/__proto__', '/toString', '/hasOwnProperty']) {
      assert.equal(required([{ argument, op: 'eq', value: 'x' }], {}), true, argument);
    }
    // An own "__proto__" key, as JSON.parse creates it, is an argument like any other.
    const parsed: unknown = JSON.parse('{"__proto__": 5}');
    assert.equal(required([{ argument: '/__proto__', op: 'gt', value: 10 }], parsed), false);
  });
});

describe('RFC 6901 pointers', () => {
  test('nested objects and array indices resolve', () => {
    const args = { order: { lines: [{ qty: 1 }, { qty: 50 }] } };
    const cond = (argument: string): ApprovalCondition => ({ argument, op: 'gt', value: 10 });
    assert.equal(required([cond('/order/lines/0/qty')], args), false);
    assert.equal(required([cond('/order/lines/1/qty')], args), true);
  });

  test('array indices must be canonical and in range', () => {
    const args = { xs: [1, 2] };
    const cond = (argument: string): ApprovalCondition => ({ argument, op: 'lt', value: 100 });
    assert.equal(required([cond('/xs/0')], args), true); // holds: 1 < 100
    const notAt = (argument: string): ApprovalCondition => ({ argument, op: 'gt', value: 100 });
    assert.equal(required([notAt('/xs/1')], args), false);
    for (const bad of [
      '/xs/2',
      '/xs/-',
      '/xs/01',
      '/xs/-0',
      '/xs/1.0',
      '/xs/ 1',
      '/xs/',
      '/xs/1e0',
    ]) {
      assert.equal(required([notAt(bad)], args), true, bad);
    }
  });

  test('~1 decodes to / and ~0 to ~, in that order', () => {
    const args = { 'a/b': 1, 'm~n': 2, '~1': 3, 'c%d': 4, '': 5, ' ': 6 };
    const eq = (argument: string, value: number): ApprovalCondition => ({
      argument,
      op: 'eq',
      value,
    });
    assert.equal(required([eq('/a~1b', 1)], args), true);
    assert.equal(required([eq('/m~0n', 2)], args), true);
    assert.equal(required([eq('/~01', 3)], args), true);
    assert.equal(required([eq('/c%d', 4)], args), true);
    assert.equal(required([eq('/', 5)], args), true);
    assert.equal(required([eq('/ ', 6)], args), true);
    // Checked by absence: the wrong decoding order would resolve to the key "/" (missing → asks).
    assert.equal(required([{ argument: '/~01', op: 'ne', value: 3 }], args), false);
    assert.equal(required([{ argument: '/a~1b', op: 'ne', value: 1 }], args), false);
  });

  test('the empty pointer is the whole document, which never compares to a scalar', () => {
    assert.equal(required([{ argument: '', op: 'ne', value: 1 }], { a: 1 }), true);
    assert.equal(required([{ argument: '', op: 'lt', value: 10 }], 5), true);
    assert.equal(required([{ argument: '', op: 'gt', value: 10 }], 5), false);
  });
});
