/** @module Principals and grants (C4). Anything exported here is public API. */
export {
  adminTokenMatches,
  checkAdminTokenStrength,
  generateAdminToken,
  loadOrCreateAdminToken,
  readAdminToken,
} from './admin-token.js';
export type { AgentAuthenticatorDeps, AuthRefusals } from './agent-authenticator.js';
export { AgentAuthenticator } from './agent-authenticator.js';
export type { IssuedKey } from './agent-keys.js';
export { AgentKeys } from './agent-keys.js';
export type {
  AgentCeilings,
  AgentSpec,
  AgentTier,
  AgentView,
  CeilingWindow,
  ChangeOutcome,
  GrantSpec,
  SessionBudgets,
} from './agent-service.js';
export {
  AgentService,
  agentSpecSchema,
  agentSpecTextProblems,
  grantSpecSchema,
} from './agent-service.js';
export type { JwtConfig, VerifiedToken } from './jwt-verifier.js';
export { JwtVerifier } from './jwt-verifier.js';
export { AccessTokenVerifier } from './oauth/access-token-verifier.js';
export type { BearerChallenge, BearerError } from './oauth/bearer-challenge.js';
export { bearerChallenge } from './oauth/bearer-challenge.js';
export type { ProtectedResourceMetadata } from './oauth/protected-resource-metadata.js';
export {
  protectedResourceMetadata,
  protectedResourceMetadataUrl,
} from './oauth/protected-resource-metadata.js';
export type {
  OAuthIssuer,
  OAuthResourceServerConfig,
  OAuthTokenExchange,
} from './oauth/resource-server-config.js';
export { exchangeIssuer, parseOAuthConfig, scopesFor } from './oauth/resource-server-config.js';
export {
  isLocalUserId,
  isUserId,
  oauthUserId,
  parseOAuthUserId,
  USER_ID_PATTERN,
} from './user-id.js';
export type { UserSpec, UserView } from './user-service.js';
export { UserService, userSpecSchema, userSpecTextProblems } from './user-service.js';
