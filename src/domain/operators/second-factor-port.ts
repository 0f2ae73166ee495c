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
}
