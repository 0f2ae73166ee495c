/**
 * @module The stored key of an idempotency record. A key is scoped to the whole principal — the
 * agent, the user the session acts for and the credential that opened it (INVARIANTS 3) — and the
 * tool: the same key sent for another user, or with another API key of the same agent, is another
 * record, so nobody receives a result produced for another principal. The user is the whole
 * (issuer, subject) pair (identity/user-id.ts), so two issuers' `alice` are two scopes.
 */

/** Whose key it is: the session's agent, user and credential (null for in-process callers). */
export interface IdempotencyOwner {
  readonly agentId: string;
  readonly userId: string | null;
  readonly credential: string | null;
}

/**
 * JSON keeps the parts apart whatever characters they hold. `v4`: records written before the
 * credential was part of the scope (`v3`, and `v2` keyed by a bare subject) match no principal any
 * more, whoever presents the key — so none is replayed to another credential.
 */
export function idempotencyScope(owner: IdempotencyOwner, toolId: string, key: string): string {
  return JSON.stringify(['v4', owner.agentId, owner.userId, owner.credential, toolId, key]);
}
