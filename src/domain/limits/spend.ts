/**
 * @module What one call costs (a tool's declared `cost`), in whole cents, read exactly from the
 * definition or from the named argument. Never rounds: an amount in major units with a third
 * decimal place, a negative one or one past a safe integer is refused, not charged approximately.
 */

import { toFixedPoint } from '../../core/exact-decimal.js';
import type { Cost } from '../catalog/index.js';

export type CostReading =
  | { readonly ok: true; readonly cents: number }
  | { readonly ok: false; readonly message: string };

const FREE: CostReading = { ok: true, cents: 0 };

/** The cost of a call with these (validated) arguments; zero for a tool that declares none. */
export function costOf(
  cost: Cost | undefined,
  args: Readonly<Record<string, unknown>>,
): CostReading {
  if (cost === undefined) return FREE;
  if ('fixed_cents' in cost) return { ok: true, cents: cost.fixed_cents };
  const value = Object.hasOwn(args, cost.argument) ? args[cost.argument] : undefined;
  // Registration makes the argument required, numeric and non-negative; a call that still gets
  // here without one (a schema changed under a pinned provider, a library caller) is not free.
  const cents = toFixedPoint(value, cost.unit === 'major' ? 2 : 0);
  const name = JSON.stringify(cost.argument);
  if (cents === null) {
    return {
      ok: false,
      message:
        cost.unit === 'major'
          ? `argument ${name} is the cost in major units and must have at most 2 decimal places`
          : `argument ${name} is the cost in cents and must be a whole number`,
    };
  }
  if (cents < 0n || cents > BigInt(Number.MAX_SAFE_INTEGER)) {
    return { ok: false, message: `argument ${name} is not a cost that can be charged` };
  }
  return { ok: true, cents: Number(cents) };
}
