/**
 * @module The port through which operator logins and step-ups check a second factor (TOTP).
 * Enrolment is an admin's act for a named operator; the secrets live encrypted in the database,
 * so every replica sees a new enrolment at once.
 */

export interface SecondFactorCheck {
  /** Whether the operator has a second factor enrolled. */
  enrolled(operatorId: string): Promise<boolean>;
  /**
   * Checks a code; resolves when it is valid and unused, otherwise throws a ToolgateError
   * (wrong code, replayed code, backoff, lockout, none enrolled). Every failure counts.
   */
  verify(operatorId: string, code: string): Promise<void>;
  /**
   * Checks a passkey assertion (the browser's answer to a sign-in challenge) of one of the
   * operator's passkeys; resolves once, for a valid one whose challenge it spent. Absent: no
   * passkey sign-in.
   */
  verifyPasskey?(operatorId: string, assertion: unknown): Promise<void>;
}

/** A sign-in's second factor: a TOTP code, or a passkey's answer to a sign-in challenge. */
export type SignInFactor = string | { readonly passkey: unknown };

/**
 * Checks a sign-in's second factor through the port (docs/architecture.md §6: a passkey is the
 * second factor after the password, never the sign-in alone); answers how the operator signed in.
 * Throws on any failure, a passkey where the port checks none included.
 */
export async function checkSignInFactor(
  port: SecondFactorCheck,
  operatorId: string,
  factor: SignInFactor,
): Promise<'password+totp' | 'password+passkey'> {
  if (typeof factor === 'string') {
    await port.verify(operatorId, factor);
    return 'password+totp';
  }
  if (factor === null || typeof factor !== 'object' || !port.verifyPasskey)
    throw new Error('no passkey sign-in');
  await port.verifyPasskey(operatorId, factor.passkey);
  return 'password+passkey';
}
