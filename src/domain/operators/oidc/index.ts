/** @module Single sign-on with OpenID Connect (relying party). Anything exported here is public API. */
export type { OidcConfig, OidcConfigInput } from './oidc-config.js';
export {
  DEFAULT_OIDC_SCOPES,
  defaultOidcRedirectUri,
  OIDC_ASYMMETRIC_ALGS,
  oidcConfigFromEnv,
  resolveOidcConfig,
} from './oidc-config.js';
export type { OidcProviderMetadata } from './oidc-discovery.js';
export type { OidcFailure } from './oidc-failure.js';
export { OIDC_BROWSER_MESSAGE, OIDC_FAILURES, oidcFailure } from './oidc-failure.js';
export type { OidcIdentity, OidcLoginOptions, PendingOidcLogin } from './oidc-login.js';
export { OidcLogin, PENDING_TTL_MS } from './oidc-login.js';
