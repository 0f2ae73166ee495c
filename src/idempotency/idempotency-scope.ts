/**
 * @module The stored key of an idempotency record. A key is scoped to the principal — the agent
 * and the user the session acts for — and the tool: the same key sent for another user is
 * another record, so one user never receives the result produced for another.
 */

/** JSON keeps the parts apart whatever characters a token's user id holds. */
export function idempotencyScope(
  agentId: string,
  userId: string | null,
  toolId: string,
  key: string,
): string {
  return JSON.stringify(['v2', agentId, userId, toolId, key]);
}
