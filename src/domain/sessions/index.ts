/**
 * @module Sessions: runs, their permitted sets, the principal a session is bound to, and the
 * per-agent caps on open sessions and pending approvals. Anything exported here is public API.
 */
export type { AgentCaps } from './agent-caps.js';
export {
  callInFlight,
  DEFAULT_AGENT_CAPS,
  lockAgent,
  maxPendingApprovalsPerPrincipal,
  pendingApprovalsOf,
  pendingApprovalsOfPrincipal,
  resolveAgentCaps,
  sessionsWaitingOnApproval,
} from './agent-caps.js';
export type { AgentDiscoveryResult } from './agent-discovery.js';
export { AgentDiscovery } from './agent-discovery.js';
export { byTool } from './export-names.js';
export type { GovernedRead, GovernedUriEntry } from './governed-uris.js';
export {
  canonicalResourceUri,
  GovernedUris,
  governedEntryOf,
  hasUserinfo,
  readGovernedEntries,
  resolveGovernedUri,
} from './governed-uris.js';
export type {
  FlaggedResult,
  LiteralScopes,
  LiteralSighting,
  SeenLiteral,
} from './run-literals.js';
export {
  MAX_FLAGGED_EXCERPT,
  principalScope,
  UNRECORDED_HASH,
  UNRECORDED_KIND,
} from './run-literals.js';
export { type RunHandle, RunService } from './runs.js';
export type {
  OfferedEntries,
  OfferedEntry,
  OfferedPrompt,
  OfferedResource,
  OfferedResourceTemplate,
} from './session-entries.js';
export { entryKindOf, offerable, promptNames, SessionEntries } from './session-entries.js';
export { untrustedSourcesOf } from './session-row.js';
export type {
  LiveSession,
  OpenSessionOptions,
  SessionPin,
  SessionTool,
  SessionView,
  WithheldTool,
} from './session-service.js';
export {
  permittedSet,
  SessionService,
} from './session-service.js';
export {
  MAX_SHARED_SETS,
  MAX_SHARED_TOOLS,
  SessionToolIndex,
  sessionToolIndex,
  sharedToolIndexSize,
} from './session-tool-index.js';
export type { TemplateShadow } from './template-shadows.js';
export { providerOf, shadowedTemplates } from './template-shadows.js';
export {
  oauthReach,
  sessionPermissions,
  tokenCapabilities,
  tokenCovers,
} from './token-scopes.js';
export type { OfferedMajor, ToolFormat } from './tool-export.js';
export { exportTool, VERSIONS_META_KEY } from './tool-export.js';
export { MAX_UNTRUSTED_SOURCES } from './untrusted-sources.js';
export { withdrawEndedRunApprovals, withdrawRunApprovals } from './withdraw-approvals.js';
