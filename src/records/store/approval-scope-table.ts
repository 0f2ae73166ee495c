/** @module The table of approvals given with a bounded scope (migration `0047_approval_scopes`). */

/**
 * An approval given with a bounded scope (migration 0047): the principal and run it binds, the
 * tool version and its destination values' hash, its bounds and what is used of them.
 */
export interface ApprovalScopeTable {
  approval_id: string;
  agent_id: string;
  user_id: string | null;
  credential: string | null;
  run_id: string;
  tool_id: string;
  tool_version: string;
  destinations_hash: string;
  max_calls: number;
  used_calls: number;
  /** Null: no amount bound beyond the run's budgets and the agent's ceilings. */
  max_cents: number | null;
  used_cents: number;
  expires_at: string;
  /** `active`, `exhausted` (its calls or amount all used) or `revoked`. */
  status: string;
  granted_by: string;
  granted_at: string;
  revoked_by: string | null;
  revoked_at: string | null;
  revoke_reason: string | null;
}
