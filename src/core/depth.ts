/** @module Nesting depth and size of untrusted JSON, measured without recursion (so it cannot overflow). */

/** Deepest any legitimate definition or config document needs; JSON Schemas included. */
export const MAX_DOCUMENT_DEPTH = 64;

/** True if `value` nests objects or arrays deeper than `limit` levels. Never recurses. */
export function exceedsDepth(value: unknown, limit: number = MAX_DOCUMENT_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const top = stack.pop();
    if (!top) break;
    const [node, depth] = top;
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= limit) return true;
    for (const child of Object.values(node)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * How many members (an object's own entries) and elements (an array's items) `value` holds in
 * all, at every level down to `maxDepth` (deeper containers count as one value each). Stops
 * counting, and returns, once the count passes `stopAt`: the caller that only asks "more than N?"
 * pays for N members, not for the whole value. Never recurses, never throws on plain JSON.
 */
export function memberCount(
  value: unknown,
  stopAt: number = Number.POSITIVE_INFINITY,
  maxDepth: number = MAX_DOCUMENT_DEPTH,
): number {
  let count = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const top = stack.pop();
    if (!top) break;
    const [node, depth] = top;
    if (typeof node !== 'object' || node === null || depth >= maxDepth) continue;
    const children = Object.values(node);
    count += children.length;
    if (count > stopAt) return count;
    for (const child of children) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return count;
}
