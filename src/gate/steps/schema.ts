/**
 * @module The `schema` step: the arguments are a JSON object within the depth and size limits that
 * matches the tool's input schema. From here on the call works on its own copy of them, and what
 * the call would cost is read exactly now: a cost that cannot be read is bad input, refused
 * before anything is approved or counted. Step order: docs/architecture.md §3.
 */
import type { ValidateFunction } from 'ajv';
import { exceedsDepth, memberCount } from '../../core/index.js';
import { costOf } from '../../domain/limits/index.js';
import { checkSizes, MAX_SCHEMA_DEPTH } from '../../domain/policy/index.js';
import { type CallState, CONTINUE, type Refusal, refuse, type StepResult } from './step.js';

const NOT_AN_OBJECT: Refusal = {
  kind: 'refuse',
  code: 'INPUT_INVALID',
  rule: 'schema.type',
  message: 'arguments must be a JSON object',
};

const TOO_DEEP: Refusal = {
  kind: 'refuse',
  code: 'INPUT_INVALID',
  rule: 'schema.depth',
  message: `arguments nest deeper than ${MAX_SCHEMA_DEPTH} levels`,
};

/**
 * Arguments with more members and elements than this (in all) are checked up to their first
 * error only: a refusal lists at most 20 problems anyway, and Ajv's every-error mode would do and
 * keep one error per bad member (90,000 undeclared keys, 90,000 errors) for a caller that chose
 * them. Valid arguments cost the same either way.
 */
export const ALL_ERRORS_MEMBERS = 256;

/** The validator for these arguments: every error for ordinary ones, the first for large ones. */
function inputValidator(s: CallState, args: object): ValidateFunction {
  if (memberCount(args, ALL_ERRORS_MEMBERS, MAX_SCHEMA_DEPTH + 1) <= ALL_ERRORS_MEMBERS) {
    return s.compiled.validateInput;
  }
  try {
    return s.compiled.firstErrorInput();
  } catch {
    return s.compiled.validateInput;
  }
}

export function schemaStep(s: CallState): StepResult {
  const args = s.args;
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return NOT_AN_OBJECT;
  if (exceedsDepth(args, MAX_SCHEMA_DEPTH)) return TOO_DEEP;
  const def = s.def;
  const sizes = checkSizes(args, {
    maxArgumentBytes: def.arguments_policy.max_argument_bytes,
    maxCallBytes: def.arguments_policy.max_call_bytes,
  });
  if (!sizes.ok) return refuse('INPUT_INVALID', sizes.rule, sizes.message);
  const validateInput = inputValidator(s, args);
  if (!validateInput(args)) {
    const problems = (validateInput.errors ?? []).slice(0, 20).map((e) => ({
      pointer: e.instancePath,
      message: e.message ?? 'is invalid',
      rule: `schema.${e.keyword}`,
    }));
    return refuse(
      'INPUT_INVALID',
      problems[0]?.rule ?? 'schema',
      'arguments do not match the input schema',
      { problems },
    );
  }
  // Policy resolution rewrites URL and path arguments to their checked form, and that form is
  // what is approved, hashed and run.
  s.callArgs = cloneArguments(args as Record<string, unknown>);
  const cost = costOf(def.cost, s.callArgs);
  if (!cost.ok) return refuse('INPUT_INVALID', 'cost.invalid', cost.message);
  s.cents = cost.cents;
  return CONTINUE;
}

/**
 * The call's own copy of its (validated) arguments. Plain JSON values are copied directly, which
 * is several times quicker than structuredClone; anything else (a Date, a Map, a class instance
 * from a library caller) goes through structuredClone as before. An own `__proto__` member stays
 * an own member, never a prototype.
 */
export function cloneArguments(args: Record<string, unknown>): Record<string, unknown> {
  const copy = clonePlain(args);
  return copy === NOT_PLAIN
    ? (structuredClone(args) as Record<string, unknown>)
    : (copy as Record<string, unknown>);
}

const NOT_PLAIN = Symbol('not plain JSON');

function clonePlain(value: unknown): unknown {
  if (value === null || typeof value !== 'object') {
    return typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint'
      ? NOT_PLAIN
      : value;
  }
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const v = clonePlain(value[i]);
      if (v === NOT_PLAIN) return NOT_PLAIN;
      out[i] = v;
    }
    return out;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return NOT_PLAIN;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = clonePlain((value as Record<string, unknown>)[key]);
    if (v === NOT_PLAIN) return NOT_PLAIN;
    if (key === '__proto__') {
      Object.defineProperty(out, key, {
        value: v,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      out[key] = v;
    }
  }
  return out;
}
