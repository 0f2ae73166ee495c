/**
 * @module The two APIs fronts are given: `AgentApi` (REST agent routes, MCP) and `AdminApi` (REST
 * admin routes, the CLI), and the admin services that need no open gateway. Anything exported
 * here is public API for the fronts (docs/architecture.md §6).
 */

// Decisions as fronts show them: approvals and their scopes, passkey evidence.
export type {
  ApprovalScopeView,
  ApprovalView,
  DecisionEvidence,
  DecisionProofReport,
  PasskeyView,
  ScopeRequest,
  TrustedKey,
} from '../domain/decisions/index.js';
// The offline check of passkey-signed decisions needs no open gateway (an evidence file); a
// scope's words and the refusal check the approval page makes before it offers one.
export {
  parseDecisionEvidence,
  proveDecisions,
  scopeRefusalOf,
  scopeWords,
  TOTP_DIGITS,
  untilIn,
} from '../domain/decisions/index.js';
// The operator authority and what fronts need to name a person and an action (docs/architecture.md §6).
export type {
  ActionRule,
  Asking,
  Operator,
  OperatorAction,
  OperatorAuthority,
  OperatorRole,
  SignInFactor,
} from '../domain/operators/index.js';
export {
  BOOTSTRAP_OPERATOR,
  holdsAny,
  isBootstrap,
  isOperatorAction,
  OPERATOR_ACTIONS,
  OPERATOR_ROLES,
  operatorActor,
  rolesOf,
} from '../domain/operators/index.js';
export type { OfferedEntries } from '../domain/sessions/index.js';
// What a front renders of the gate's answer: the decision and the `_meta` key of its trust label.
export { TRUST_META_KEY } from '../domain/text-trust/index.js';
export type { CallContext, CallOptions, EntryRef, GateDecision } from '../gate/index.js';
export { dbLocation, dbUrlSecrets } from '../records/store/index.js';
export type { AdminApi } from './admin-api.js';
export {
  AGENTS_ADMIN,
  APPROVALS_ADMIN,
  AUDIT_ADMIN,
  AUDIT_RECORDS_ADMIN,
  CATALOG_ADMIN,
  CHANGES_ADMIN,
  CLASSIFIED_ADMIN,
  CONFIG_ADMIN,
  CONSOLE_SESSIONS_ADMIN,
  DECISIONS_ADMIN,
  DESTINATION_SETS_ADMIN,
  DISCOVERY_ADMIN,
  KEYS_ADMIN,
  METRICS_ADMIN,
  OPERATORS_ADMIN,
  OWNER_CHANNELS_ADMIN,
  PASSKEYS_ADMIN,
  PROVIDERS_ADMIN,
  REPORTS_ADMIN,
  REVIEWS_ADMIN,
  RUNS_ADMIN,
  SECOND_FACTOR_ADMIN,
  SECRETS_ADMIN,
  SESSIONS_ADMIN,
  TOOL_HEALTH_ADMIN,
  USERS_ADMIN,
} from './admin-api.js';
export { adminSweep } from './admin-sweep.js';
export type {
  AgentApi,
  AgentApprovalStatus,
  AgentCallOutcome,
  CallerValues,
  OAuthFront,
  RevisionAnnouncements,
  SecurityEvents,
} from './agent-api.js';
export {
  DISCOVERY_AGENT,
  ENTRIES_AGENT,
  RUNS_AGENT,
  SESSIONS_AGENT,
  stepUpChallenge,
} from './agent-api.js';
export type {
  BackupFile,
  BackupManifest,
  BackupOptions,
  KeyFile,
  RestoreOptions,
  RestoreResult,
} from './backup.js';
export { BACKUP_FORMAT, backup, readManifest, restore } from './backup.js';
export {
  ensureMasterKeyFile,
  inlineMasterKey,
  restoreMasterKey,
} from './backup-authentication.js';
export { expose } from './expose.js';
export type { DriverReport } from './host-admin.js';
export { codeHash, hostDoctor, SANDBOX_DRIVERS } from './host-admin.js';
export {
  checkAdminTokenStrength,
  healthConfigFromEnv,
  notifyConfigFromEnv,
  oidcConfigFromEnv,
  readAdminToken,
  refusalProblems,
  settingProblems,
  settingsValidator,
  tracingConfigFromEnv,
  uidRangeFromEnv,
} from './host-settings.js';
export { RefusalSampler, type SampleKey, type SamplerOptions } from './refusal-sampler.js';
export { securityEvents } from './security-events.js';
export type { CheckedStartConfiguration, StartConfiguration } from './start-configuration.js';
export { checkStartConfiguration } from './start-configuration.js';
