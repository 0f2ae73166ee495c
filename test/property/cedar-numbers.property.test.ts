/**
 * Numbers in Cedar policies are read exactly or not at all. A forbid on
 * `amount > 100` must never let 100.5 or 1,000,000.5 through: through `numeric_arguments` (Long)
 * a fractional or unsafe number is refused (`cedar.number_inexact`), through `decimal_arguments`
 * it is compared exactly; a number the decimal cannot hold (a fifth place, out of range, an
 * exponent form past it) is refused, never rounded. The oracle is BigInt arithmetic on the decimal
 * text the number was drawn as.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CedarDecision, CedarRequest } from '../../src/domain/policy/cedar/index.js';
import { CedarPolicyEngine } from '../../src/domain/policy/cedar/index.js';
import { cedarContext, cedarTool } from '../support/cedar.js';
import { fc } from '../support/property.js';

const LONG_POLICY =
  '@id("long-cap") forbid (principal, action, resource) when { context.numeric_arguments.hasTag("amount") && context.numeric_arguments.getTag("amount") > 100 };';
const decimalPolicy = (threshold: string) =>
  `@id("decimal-cap") forbid (principal, action, resource) when { context.decimal_arguments.hasTag("amount") && context.decimal_arguments.getTag("amount").greaterThan(decimal("${threshold}")) };`;

function load(text: string): CedarPolicyEngine {
  const result = CedarPolicyEngine.load([{ id: 'p', text }]);
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.problems)}`);
  return result.engine;
}

function request(args: Record<string, unknown>): CedarRequest {
  return {
    agent: { id: 'bot', owner: 'team', capabilities: [] },
    tool: cedarTool('pay.send', {
      action_class: 'irreversible',
      data_access: 'none',
      access_tier: 'restricted',
      owner: 'team',
      provenance: 'internal',
    }),
    context: cedarContext({ arguments: args }),
  };
}

type Outcome = 'allow' | 'policy' | 'inexact';

function outcome(d: CedarDecision): Outcome {
  if (d.decision === 'allow') return 'allow';
  return d.rule === 'cedar.number_inexact' ? 'inexact' : 'policy';
}

/** A decimal drawn as exact parts: sign, up to 15 significant digits, 0–6 decimal places. */
const exactNumber = fc
  .record({
    units: fc.bigInt({ min: -(10n ** 15n) + 1n, max: 10n ** 15n - 1n }),
    scale: fc.integer({ min: 0, max: 6 }),
  })
  .map(({ units, scale }) => {
    const abs = (units < 0n ? -units : units).toString().padStart(scale + 1, '0');
    const text = `${units < 0n ? '-' : ''}${scale === 0 ? abs : `${abs.slice(0, -scale)}.${abs.slice(-scale)}`}`;
    return { units, scale, value: Number(text) };
  });

/** Smallest scale: 1.50 → (15, 1). */
function normal(units: bigint, scale: number): { units: bigint; scale: number } {
  let u = units;
  let s = scale;
  while (s > 0 && u % 10n === 0n) {
    u /= 10n;
    s -= 1;
  }
  return { units: u, scale: s };
}

const DECIMAL_LIMIT = 2n ** 63n; // in units of 10^-4

describe('a numeric forbid reads numbers exactly or refuses the call', () => {
  test('the reported cases: 100.5 and 1,000,000.5 never pass a forbid on amount > 100', () => {
    const long = load(LONG_POLICY);
    const dec = load(decimalPolicy('100.0'));
    for (const amount of [100.5, 1_000_000.5]) {
      assert.equal(outcome(long.evaluate(request({ amount }))), 'inexact');
      assert.equal(outcome(dec.evaluate(request({ amount }))), 'policy');
    }
    // The benign neighbours: whole amounts at or under the cap, and 99.99 as a decimal.
    assert.equal(outcome(long.evaluate(request({ amount: 100 }))), 'allow');
    assert.equal(outcome(long.evaluate(request({ amount: 101 }))), 'policy');
    assert.equal(outcome(dec.evaluate(request({ amount: 99.99 }))), 'allow');
    assert.equal(outcome(dec.evaluate(request({ amount: 100 }))), 'allow');
    assert.equal(outcome(dec.evaluate(request({ amount: 100.0001 }))), 'policy');
  });

  test('numbers the decimal cannot hold are refused, never rounded', () => {
    const dec = load(decimalPolicy('100.0'));
    for (const amount of [
      100.00001, // a fifth decimal place
      1e-7,
      1e300, // exponent form beyond the range
      -1e300,
      922337203685477.6, // just past the range
    ]) {
      const d = dec.evaluate(request({ amount }));
      assert.equal(outcome(d), 'inexact', String(amount));
      assert.ok(d.decision === 'deny' && d.policies[0] === 'decimal-cap');
    }
    // NaN and Infinity have no JSON form at all (a library caller could pass them): denied too.
    for (const amount of [Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.equal(dec.evaluate(request({ amount })).decision, 'deny', String(amount));
    }
    // Exact at the edges of the range: held, and compared.
    assert.equal(outcome(dec.evaluate(request({ amount: -922337203685477.5 }))), 'allow');
    assert.equal(outcome(dec.evaluate(request({ amount: 1.5e3 }))), 'policy');
  });

  test('a Long view refuses unsafe integers and every fraction it reads', () => {
    const long = load(LONG_POLICY);
    for (const amount of [2 ** 53, 1e20, -1e20, 0.5, -100.5]) {
      assert.equal(outcome(long.evaluate(request({ amount }))), 'inexact', String(amount));
    }
    // A number the policy does not read is no reason to refuse.
    assert.equal(outcome(long.evaluate(request({ amount: 5, fee: 0.25 }))), 'allow');
    // Not a number: the tag is absent as before (the input schema decides what is allowed).
    assert.equal(outcome(long.evaluate(request({ amount: '1000000.5' }))), 'allow');
  });

  test('a policy that uses a view in a way the analysis cannot narrow reads every number', () => {
    // Any tag name, chosen at run time: every number argument must be exact.
    const engine = load(
      'forbid (principal, action, resource) when { context.arguments.hasTag("k") && context.numeric_arguments.hasTag(context.arguments.getTag("k")) };',
    );
    assert.equal(outcome(engine.evaluate(request({ k: 'x', other: 2.5 }))), 'inexact');
    assert.equal(outcome(engine.evaluate(request({ k: 'x', other: 2 }))), 'allow');
  });

  test('decimal view agrees with exact arithmetic on every drawn number and threshold', () => {
    fc.assert(
      fc.property(
        exactNumber,
        fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }),
        (n, thresholdUnits) => {
          // threshold = thresholdUnits / 10^4, written with its four places.
          const abs = (thresholdUnits < 0n ? -thresholdUnits : thresholdUnits)
            .toString()
            .padStart(5, '0');
          const threshold = `${thresholdUnits < 0n ? '-' : ''}${abs.slice(0, -4)}.${abs.slice(-4)}`;
          const engine = load(decimalPolicy(threshold));
          const got = outcome(engine.evaluate(request({ amount: n.value })));
          const { units, scale } = normal(n.units, n.scale);
          if (scale > 4) return got === 'inexact';
          const scaled = units * 10n ** BigInt(4 - scale);
          if (scaled >= DECIMAL_LIMIT || scaled < -DECIMAL_LIMIT) return got === 'inexact';
          return got === (scaled > thresholdUnits ? 'policy' : 'allow');
        },
      ),
      { numRuns: 300 },
    );
  });

  test('Long view agrees with exact arithmetic: integers compared, anything else refused', () => {
    const engine = load(LONG_POLICY);
    fc.assert(
      fc.property(exactNumber, (n) => {
        const got = outcome(engine.evaluate(request({ amount: n.value })));
        const { units, scale } = normal(n.units, n.scale);
        if (scale > 0) return got === 'inexact';
        return got === (units > 100n ? 'policy' : 'allow');
      }),
      { numRuns: 500 },
    );
  });
});
