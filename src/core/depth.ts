/** @module Nesting depth of untrusted JSON, measured without recursion (so it cannot overflow). */

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
