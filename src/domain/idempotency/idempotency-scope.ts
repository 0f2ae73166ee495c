/**
 * @module The stored key of an idempotency record. A key is scoped to the principal — the agent
 * and the user the session acts for — and the tool: the same key sent for another user is
 * another record, so one user never receives the result produced for another. The user is the
 * whole (issuer, subject) pair (identity/user-id.ts), so two issuers' `alice` are two scopes.
 */

/**
 * JSON keeps the parts apart whatever characters a user id holds. `v3`: records written while an
 * OAuth user was keyed by its bare subject (`v2`) match no principal any more, whoever presents
 * the key — they cannot be told apart by issuer, so none is replayed.
 */
export function idempotencyScope(
  agentId: string,
  userId: string | null,
  toolId: string,
  key: string,
): string {
  return JSON.stringify(['v3', agentId, userId, toolId, key]);
}
