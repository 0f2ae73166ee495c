/**
 * @module `@simplewebauthn/server`, loaded the first time a passkey is used. The package and the
 * certificate libraries it brings take about half a second to load, which every command of the
 * CLI paid at start (`tools list` included) while only passkey enrolment, sign-in and decisions,
 * and `decisions verify`, need it (docs/architecture.md §6, "Passkeys bound to the decision").
 */
type WebAuthn = typeof import('@simplewebauthn/server');

let loading: Promise<WebAuthn> | null = null;

/** The library, imported once per process on first use. */
export function webauthn(): Promise<WebAuthn> {
  loading ??= import('@simplewebauthn/server');
  return loading;
}
