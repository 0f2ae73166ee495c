/**
 * @module The operator tables' row types: accounts (local or single sign-on), personal tokens
 * (their SHA-256 only) and the per-account count of failed local logins.
 */

export interface OperatorTable {
  id: string;
  name: string;
  /** JSON array of roles (at least one). */
  roles: string;
  /** JSON array of team names. */
  teams: string;
  kind: 'local' | 'oidc';
  disabled: number;
  /** `scrypt$N=…,r=…,p=…$<salt>$<hash>` for local accounts with a password; null otherwise. */
  password_hash: string | null;
  oidc_issuer: string | null;
  oidc_subject: string | null;
  email: string | null;
  created_at: string;
  created_by: string;
  updated_at: string;
  /** Who last handed the account credentials or a deciding role (an actor id); null: nobody yet. */
  set_up_by: string | null;
  /** The operator who confirmed the account since (`admin-token` at genesis, `upgrade`); or null. */
  confirmed_by: string | null;
  confirmed_at: string | null;
}

export interface OperatorTokenTable {
  id: string;
  operator_id: string;
  name: string;
  /** Lowercase hex SHA-256 of the whole token; unique, the one lookup per request. */
  token_hash: string;
  /** JSON array: the roles this token may use (intersected with the account's current ones). */
  roles: string;
  created_at: string;
  created_by: string;
  expires_at: string;
  revoked_at: string | null;
}

export interface OperatorLoginAttemptTable {
  operator_id: string;
  failures: number;
  next_attempt_ms: number;
  locked_until_ms: number;
  updated_at: string;
}
