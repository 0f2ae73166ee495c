/**
 * @module Which call arguments a forbid policy reads as numbers, through `context.numeric_arguments`
 * (Long) or `context.decimal_arguments` (decimal), from its JSON form. The engine refuses a call
 * whose argument such a policy reads but that view cannot hold exactly (a fraction as a Long, a
 * fifth decimal place): the tag would be absent, and a `forbid` on `amount > 100` would then not
 * fire for 100.5. Conservative: a view used in any other way reads every argument.
 */

import type { PolicyJson } from '@cedar-policy/cedar-wasm/nodejs';
import { isNode, only } from './policy-json.js';

export type NumericView = 'long' | 'decimal';

const VIEW_OF: Readonly<Record<string, NumericView>> = {
  numeric_arguments: 'long',
  decimal_arguments: 'decimal',
};

/** Per view: the argument names read, or `all`. */
export interface NumericReads {
  readonly long: ReadonlySet<string> | 'all';
  readonly decimal: ReadonlySet<string> | 'all';
}

/** The view an expression denotes when it is exactly `context.numeric_arguments|decimal_arguments`. */
function viewOf(expr: unknown): NumericView | undefined {
  if (!isNode(expr)) return undefined;
  const access = only(expr, '.');
  if (!isNode(access) || typeof access.attr !== 'string') return undefined;
  if (!isNode(access.left) || only(access.left, 'Var') !== 'context') return undefined;
  return Object.hasOwn(VIEW_OF, access.attr) ? VIEW_OF[access.attr] : undefined;
}

class Walker {
  readonly long = new Set<string>();
  readonly decimal = new Set<string>();
  allLong = false;
  allDecimal = false;

  #all(view?: NumericView): void {
    if (view !== 'decimal') this.allLong = true;
    if (view !== 'long') this.allDecimal = true;
  }

  expr(e: unknown): void {
    if (Array.isArray(e)) {
      for (const x of e) this.expr(x);
      return;
    }
    if (!isNode(e)) return;
    if ('Slot' in e) {
      this.#all();
      return;
    }
    const v = only(e, 'Var');
    if (v !== undefined) {
      // The whole context (or something not understood) may reach either view.
      if (v !== 'principal' && v !== 'resource' && v !== 'action') this.#all();
      return;
    }
    for (const op of ['hasTag', 'getTag'] as const) {
      const access = only(e, op);
      if (isNode(access) && 'left' in access && 'right' in access) {
        const view = viewOf(access.left);
        const tag = isNode(access.right) ? only(access.right, 'Value') : undefined;
        if (view !== undefined && typeof tag === 'string') {
          (view === 'long' ? this.long : this.decimal).add(tag);
          return;
        }
        if (view !== undefined) this.#all(view);
        else this.expr(access.left);
        this.expr(access.right);
        return;
      }
    }
    for (const op of ['.', 'has'] as const) {
      const access = only(e, op);
      if (isNode(access) && typeof access.attr === 'string' && 'left' in access) {
        if (isNode(access.left) && only(access.left, 'Var') === 'context') {
          // `context.hour_utc` reads no argument; the view itself outside hasTag/getTag reads all.
          if (Object.hasOwn(VIEW_OF, access.attr)) this.#all(VIEW_OF[access.attr]);
          return;
        }
        this.expr(access.left);
        return;
      }
    }
    for (const value of Object.values(e)) this.expr(value);
  }
}

/** What one policy reads as numbers, scope and conditions together. */
export function numericReads(policy: PolicyJson): NumericReads {
  const w = new Walker();
  w.expr(policy.conditions as unknown);
  return {
    long: w.allLong ? 'all' : w.long,
    decimal: w.allDecimal ? 'all' : w.decimal,
  };
}

/** True when the policy reads no argument as a number. */
export function readsNoNumbers(reads: NumericReads): boolean {
  return (
    reads.long !== 'all' &&
    reads.long.size === 0 &&
    reads.decimal !== 'all' &&
    reads.decimal.size === 0
  );
}
