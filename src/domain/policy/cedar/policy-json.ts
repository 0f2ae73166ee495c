/**
 * @module Reading Cedar's JSON form of a policy: the node shapes the analyses of what a policy
 * reads (request-facts.ts, numeric-reads.ts) walk.
 */

export type Node = Record<string, unknown>;

export function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The node's member `key` when it is its only member (Cedar's `{ "op": operand }` form). */
export function only(node: Node, key: string): unknown {
  const keys = Object.keys(node);
  return keys.length === 1 && keys[0] === key ? node[key] : undefined;
}
