/**
 * @module The passkeys' tables (migration `0043_passkeys`, docs/architecture.md §6): public keys,
 * the challenges the server issued, and the assertions kept with the decisions they signed.
 */

/** An operator's passkey (WebAuthn credential): its public key, never a secret. */
export interface OperatorPasskeyTable {
  credential_id: string;
  operator_id: string;
  name: string;
  public_key: string;
  counter: number;
  /** JSON list of the transports the browser reported. */
  transports: string;
  aaguid: string;
  backed_up: number;
  rp_id: string;
  created_at: string;
  created_by: string;
  last_used_at: string | null;
}

/** A WebAuthn challenge the server issued: single use, short-lived. */
export interface PasskeyChallengeTable {
  challenge: string;
  purpose: string;
  operator_id: string | null;
  commitment: string | null;
  rp_id: string;
  origin: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

/** A passkey assertion kept with the decision it signed (core/decision-commitment.ts). */
export interface DecisionAssertionTable {
  id: string;
  kind: string;
  subject_id: string;
  approver_id: string;
  credential_id: string;
  public_key: string;
  commitment: string;
  challenge: string;
  authenticator_data: string;
  client_data_json: string;
  signature: string;
  user_handle: string | null;
  rp_id: string;
  origin: string;
  at: string;
}
