/**
 * @module The asymmetric JWS algorithms a token verifier may be configured with: `none` and HS*
 * (a shared secret posing as a key) never verify. One list for the OAuth resource server and
 * single sign-on.
 */
export const ASYMMETRIC_JWS_ALGS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;
