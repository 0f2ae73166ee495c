/** @module The details of the passkey codes of the error catalogue (errors.ts, docs/errors.md). */

/** Why a passkey assertion was refused (PASSKEY_REFUSED's `details.reason`). */
export type PasskeyRefusal =
  | 'malformed'
  | 'relying_party'
  | 'unknown_challenge'
  | 'not_yours'
  | 'expired'
  | 'used'
  | 'other_decision'
  | 'unknown_credential'
  | 'signature'
  | 'no_second_factor';

/**
 * `reason`: which check refused it; `differs`: for `other_decision`, the fields of the decision the
 * assertion was made for that are not this one's (`id`, `args_hash`, `decision`…).
 */
export interface PasskeyRefusedDetails {
  reason: PasskeyRefusal;
  differs?: string[];
}

/** The decision a TOTP code was refused for, where the organisation requires a passkey. */
export interface PasskeyRequiredDetails {
  kind: 'approval' | 'change' | 'review';
  id: string;
}
