/**
 * @module What changed between two JSON values, path by path, for reviewers (a four-eyes change
 * page lists it above the line diff): each member added, removed or given another value, named
 * by its JSON Pointer (RFC 6901, so a key holding `/` or `~` cannot pass for another path) with
 * the value before and after. Object members in canonical order (UTF-16 code units, as
 * canonical JSON sorts them), array items by index; one walk of both values, no recursion, so
 * its cost is their size whatever their depth. It never gives up: past `limit` it stops listing
 * but counts every change (`total`), so a page says how many it does not show.
 */

/** One changed path: `before` is absent for an added member, `after` for a removed one. */
export type PathChange =
  | { readonly op: 'add'; readonly path: string; readonly after: unknown }
  | { readonly op: 'remove'; readonly path: string; readonly before: unknown }
  | {
      readonly op: 'change';
      readonly path: string;
      readonly before: unknown;
      readonly after: unknown;
    };

export interface JsonDiff {
  /** The first `limit` changes in document order. */
  readonly changes: readonly PathChange[];
  /** Every change, listed or not. */
  readonly total: number;
}

/** Changes listed by default; the rest are counted. */
export const MAX_LISTED_PATHS = 500;

/** A JSON Pointer's reference token: `~` as `~0`, `/` as `~1`. */
function token(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

type Shape = 'object' | 'array' | 'scalar';

function shapeOf(value: unknown): Shape {
  if (Array.isArray(value)) return 'array';
  return value !== null && typeof value === 'object' ? 'object' : 'scalar';
}

/** A member one side does not have. */
const ABSENT: unique symbol = Symbol('absent');

interface Pair {
  readonly path: string;
  readonly before: unknown;
  readonly after: unknown;
}

function memberOf(container: object, key: string | number): unknown {
  return Object.hasOwn(container, key)
    ? (container as Record<string | number, unknown>)[key]
    : ABSENT;
}

/** The pairs of members of two objects or two arrays, in document order. */
function membersOf(pair: Pair, shape: 'object' | 'array'): Pair[] {
  const a = pair.before as object;
  const b = pair.after as object;
  const keys: (string | number)[] =
    shape === 'array'
      ? Array.from(
          { length: Math.max((a as unknown[]).length, (b as unknown[]).length) },
          (_, i) => i,
        )
      : [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.map((key) => ({
    path: `${pair.path}/${typeof key === 'number' ? key : token(key)}`,
    before: memberOf(a, key),
    after: memberOf(b, key),
  }));
}

/** The changes from `before` to `after` (both plain JSON values, as JSON.parse makes them). */
export function jsonDiff(before: unknown, after: unknown, limit = MAX_LISTED_PATHS): JsonDiff {
  const changes: PathChange[] = [];
  let total = 0;
  const note = (change: PathChange) => {
    total++;
    if (changes.length < limit) changes.push(change);
  };
  // Pairs still to compare, the next one last (so paths come out in document order).
  const stack: Pair[] = [{ path: '', before, after }];
  for (let pair = stack.pop(); pair !== undefined; pair = stack.pop()) {
    const { path } = pair;
    if (pair.before === ABSENT) note({ op: 'add', path, after: pair.after });
    else if (pair.after === ABSENT) note({ op: 'remove', path, before: pair.before });
    else {
      const shape = shapeOf(pair.before);
      if (shape === 'scalar' || shape !== shapeOf(pair.after)) {
        if (pair.before !== pair.after) note({ op: 'change', ...pair });
      } else {
        const members = membersOf(pair, shape);
        for (let i = members.length - 1; i >= 0; i--) stack.push(members[i] as Pair);
      }
    }
  }
  return { changes, total };
}
