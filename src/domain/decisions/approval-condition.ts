/** @module Whether a call needs approval, from its tool's approval rule and its arguments. */

/** Same shape as the catalog's `approval.conditions[]` entry. */
export interface ApprovalCondition {
  /** RFC 6901 JSON pointer into the call's arguments, e.g. `/amount`. */
  readonly argument: string;
  readonly op: 'gt' | 'gte' | 'lt' | 'lte' | 'eq' | 'ne';
  readonly value: number | string | boolean;
}

export interface ApprovalRequirement {
  readonly required: boolean;
  /**
   * The conditions that caused the requirement: those that held and those that could not be
   * evaluated (and so were taken to hold). Empty for `none` and `always`.
   */
  readonly matched: readonly ApprovalCondition[];
}

/**
 * `none` never asks, `always` always does, `conditional` asks when any condition holds.
 *
 * Fails closed: a condition that cannot be evaluated counts as holding. An approval rule exists
 * because some calls are dangerous; a missing argument, a value of the wrong type, NaN, an
 * unresolvable pointer or an unknown operator means we cannot tell this call is one of the safe
 * ones, and an agent must not be able to skip review by sending `"amount": "5000"` instead of
 * `5000`, or by omitting a field the tool then defaults. So is `conditional` with no conditions
 * (a misconfiguration), and so is any unknown mode.
 */
export function approvalRequired(
  mode: 'none' | 'always' | 'conditional',
  conditions: readonly ApprovalCondition[] | undefined,
  args: unknown,
): ApprovalRequirement {
  if (mode === 'none') return { required: false, matched: [] };
  if (mode !== 'conditional') return { required: true, matched: [] };
  if (conditions === undefined || conditions.length === 0) return { required: true, matched: [] };
  // Every condition is evaluated, not just up to the first hit, so the reviewer sees all reasons.
  const matched = conditions.filter((condition) => conditionHolds(condition, args));
  return { required: matched.length > 0, matched };
}

/** True when the condition holds or cannot be evaluated. */
function conditionHolds(condition: ApprovalCondition, args: unknown): boolean {
  const tokens = parsePointer(condition.argument);
  if (tokens === undefined) return true;
  const found = resolvePointer(args, tokens);
  if (!found.ok) return true;
  const outcome = compare(found.value, condition.op, condition.value);
  return outcome !== false;
}

/** RFC 6901 reference tokens, or undefined for a malformed pointer (`~` not followed by 0 or 1). */
function parsePointer(pointer: unknown): string[] | undefined {
  if (typeof pointer !== 'string') return undefined;
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  const tokens: string[] = [];
  for (const raw of pointer.slice(1).split('/')) {
    let token = '';
    for (let i = 0; i < raw.length; i++) {
      const ch = raw[i];
      if (ch !== '~') {
        token += ch;
        continue;
      }
      const next = raw[i + 1];
      if (next === '0') token += '~';
      else if (next === '1') token += '/';
      else return undefined;
      i++;
    }
    tokens.push(token);
  }
  return tokens;
}

function resolvePointer(
  document: unknown,
  tokens: readonly string[],
): { ok: true; value: unknown } | { ok: false } {
  let node = document;
  for (const token of tokens) {
    if (Array.isArray(node)) {
      // RFC 6901 array index: "0" or digits without a leading zero; "-" names no element.
      if (!/^(0|[1-9][0-9]*)$/.test(token)) return { ok: false };
      const index = Number(token);
      if (index >= node.length) return { ok: false };
      node = node[index];
    } else if (typeof node === 'object' && node !== null) {
      // Own properties only: `/constructor` or `/__proto__` must not reach Object.prototype.
      if (!Object.hasOwn(node, token)) return { ok: false };
      node = (node as Record<string, unknown>)[token];
    } else {
      return { ok: false };
    }
  }
  return { ok: true, value: node };
}

/**
 * true or false when the comparison is defined; undefined when it is not: differing types,
 * non-finite numbers, an ordering operator on strings or booleans (string order depends on
 * collation, and thresholds are numbers), or an unknown operator.
 */
function compare(
  actual: unknown,
  op: ApprovalCondition['op'],
  expected: unknown,
): boolean | undefined {
  if (typeof expected === 'number') {
    if (typeof actual !== 'number' || !Number.isFinite(actual) || !Number.isFinite(expected)) {
      return undefined;
    }
    switch (op) {
      case 'gt':
        return actual > expected;
      case 'gte':
        return actual >= expected;
      case 'lt':
        return actual < expected;
      case 'lte':
        return actual <= expected;
      case 'eq':
        return actual === expected;
      case 'ne':
        return actual !== expected;
      default:
        return undefined;
    }
  }
  if (typeof expected !== 'string' && typeof expected !== 'boolean') return undefined;
  if (typeof actual !== typeof expected) return undefined;
  // Exact comparison: strings are compared code unit by code unit, with no Unicode normalization.
  switch (op) {
    case 'eq':
      return actual === expected;
    case 'ne':
      return actual !== expected;
    default:
      return undefined;
  }
}
