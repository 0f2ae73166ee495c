/** @module Principals and grants (DESIGN.md C4). Anything exported here is public API. */
export {
  adminTokenMatches,
  checkAdminTokenStrength,
  generateAdminToken,
  loadOrCreateAdminToken,
} from './admin-token.js';
export type { AgentSpec, AgentView, ChangeOutcome, GrantSpec } from './agent-service.js';
export { AgentService, agentSpecSchema, grantSpecSchema } from './agent-service.js';
