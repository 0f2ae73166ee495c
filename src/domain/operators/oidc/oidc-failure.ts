/**
 * @module Why a single sign-on failed. The reason and message are for the log; the browser only
 * ever sees OIDC_BROWSER_MESSAGE, so a failed login tells an attacker nothing about which check
 * refused it.
 */
import { ToolgateError } from '../../../core/index.js';

export const OIDC_FAILURES = [
  'config',
  'discovery',
  'login_expired',
  'state_mismatch',
  'state_replayed',
  'provider_error',
  'issuer_mismatch',
  'token_exchange',
  'id_token_invalid',
  'nonce_mismatch',
  'no_role',
] as const;
export type OidcFailure = (typeof OIDC_FAILURES)[number];

/** The one message a browser is shown for any failed single sign-on. */
export const OIDC_BROWSER_MESSAGE = 'Single sign-on failed. Start again, or ask an administrator.';

export function oidcFailure(
  reason: OidcFailure,
  message: string,
): ToolgateError<'OIDC_LOGIN_FAILED'> {
  return new ToolgateError('OIDC_LOGIN_FAILED', `single sign-on: ${message}`, { reason });
}
