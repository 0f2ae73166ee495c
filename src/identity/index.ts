/** @module Principals and grants (C4). Anything exported here is public API. */
export {
  adminTokenMatches,
  checkAdminTokenStrength,
  generateAdminToken,
  loadOrCreateAdminToken,
} from './admin-token.js';
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
export { AgentService, agentSpecSchema, grantSpecSchema } from './agent-service.js';
export type { JwtConfig, JwtIdentity } from './jwt-verifier.js';
export { JwtVerifier } from './jwt-verifier.js';
export type { UserSpec, UserView } from './user-service.js';
export { UserService, userSpecSchema } from './user-service.js';
