/**
 * @module The one RegExp engine for patterns toolgate did not write (JSON Schema `pattern` and
 * `patternProperties` from tool definitions and upstream MCP providers): RE2 semantics, so
 * matching takes time linear in the input and no pattern can stall the event loop. Patterns RE2
 * cannot express (backreferences, lookaround) are refused, never run by a backtracking engine.
 */
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import { RE2JS } from 're2js';

/**
 * RE2 programs grow with nested counted repetition (`(a{1,100}){1,100}`); the per-character cost
 * grows with the program, so a bound on it bounds the cost of one match per input character.
 */
export const MAX_PATTERN_PROGRAM_SIZE = 5_000;
/** A pattern is text the model also reads; longer ones are not patterns but payloads. */
export const MAX_PATTERN_LENGTH = 1_024;

/** Thrown when a pattern cannot be run in linear time; `reason` says why, for a problem message. */
export class UnsupportedPatternError extends Error {
  constructor(
    readonly pattern: string,
    readonly reason: string,
  ) {
    super(`pattern ${JSON.stringify(pattern.slice(0, 80))} ${reason}`);
    this.name = 'UnsupportedPatternError';
  }
}

/**
 * Backreferences and lookaround, found by a walk over the ECMAScript source that knows escapes
 * and character classes (where `(?=` and `\1` mean something else or nothing).
 */
function backtrackingOnly(source: string): string | null {
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    if (ch === '\\') {
      const next = source[i + 1] ?? '';
      if (!inClass && /[1-9]/.test(next)) return 'uses a backreference (\\1…\\9)';
      if (!inClass && next === 'k') return 'uses a named backreference (\\k<name>)';
      i++;
      continue;
    }
    if (inClass) {
      if (ch === ']') inClass = false;
      continue;
    }
    if (ch === '[') inClass = true;
    else if (ch === '(' && source[i + 1] === '?') {
      const rest = source.slice(i + 2, i + 4);
      if (rest.startsWith('=') || rest.startsWith('!')) return 'uses a lookahead ((?= or (?!)';
      if (rest === '<=' || rest === '<!') return 'uses a lookbehind ((?<= or (?<!)';
    }
  }
  return null;
}

interface Checked {
  readonly re: RE2JS | null;
  readonly reason: string | null;
}

/** Compiled patterns by source; bounded, so a stream of distinct patterns cannot grow it. */
const cache = new Map<string, Checked>();
const CACHE_LIMIT = 1_024;

function check(source: string): Checked {
  const hit = cache.get(source);
  if (hit) return hit;
  const result = analyse(source);
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value ?? '');
  cache.set(source, result);
  return result;
}

function analyse(source: string): Checked {
  if (source.length > MAX_PATTERN_LENGTH) {
    return { re: null, reason: `is longer than ${MAX_PATTERN_LENGTH} characters` };
  }
  // JSON Schema patterns are ECMA-262 with the u flag (as Ajv compiles them). Constructing a
  // RegExp only parses it, which is linear; it is never executed.
  try {
    new RegExp(source, 'u');
  } catch (err) {
    return {
      re: null,
      reason: `is not a valid ECMA-262 regular expression: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
  const backtracking = backtrackingOnly(source);
  if (backtracking) {
    return {
      re: null,
      reason: `${backtracking}, which needs a backtracking engine; toolgate matches patterns in linear time (RE2 syntax)`,
    };
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(RE2JS.translateRegExp(source));
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { re: null, reason: `cannot be matched in linear time (RE2: ${message})` };
  }
  if (re.programSize() > MAX_PATTERN_PROGRAM_SIZE) {
    return {
      re: null,
      reason: `is too complex (RE2 program of ${re.programSize()} instructions, at most ${MAX_PATTERN_PROGRAM_SIZE})`,
    };
  }
  return { re, reason: null };
}

/** Why `source` is refused, or null when it can be matched in linear time. */
export function unsupportedPatternReason(source: string): string | null {
  return check(source).reason;
}

/** Linear-time search for `source` anywhere in `value`; throws UnsupportedPatternError. */
export function linearTest(source: string, value: string): boolean {
  const { re, reason } = check(source);
  if (!re) throw new UnsupportedPatternError(source, reason ?? 'is refused');
  return re.test(value);
}

/**
 * Ajv's `code.regExp`. Ajv keys compiled patterns by `toString()`, so each object names its own
 * source. The `u` flag needs no translation: RE2 always matches code points.
 */
export const linearRegExp: RegExpEngine = Object.assign(
  (source: string, _flags: string) => {
    const { re, reason } = check(source);
    if (!re) throw new UnsupportedPatternError(source, reason ?? 'is refused');
    return { test: (value: string) => re.test(value), toString: () => `re2:${source}` };
  },
  { code: 'linearRegExp' },
);
