/**
 * @module The catalog (C1–C3, C5 search): definitions, registration, lifecycle,
 * description safety, discovery. Anything exported here is public API.
 */
export { approversNeeded } from './approvers-needed.js';
export {
  DISCOVER_TOOLS_CAPABILITY,
  DISCOVER_TOOLS_HANDLER,
  discoverToolsDefinition,
} from './builtin-tools.js';
export type {
  CatalogOptions,
  CatalogWrite,
  ChangeRequester,
  QuarantineNotice,
  RegisterOptions,
  RegisterOutcome,
  RegisterResult,
  RegistrationRefusal,
  ReviewResult,
} from './catalog-service.js';
export { CatalogService, describeProblems } from './catalog-service.js';
export { declaredArgumentKeys } from './declared-keys.js';
export { prescanDefinitions, scanDefinition } from './definition-scan.js';
export type { ModelTextInput, ScanFinding, ScanInput, ScanText } from './description-scan.js';
export { scanModelText } from './description-scan.js';
export type { DiscoveryHit, DiscoveryQuery } from './discovery.js';
export { Discovery, MAX_DISCOVERY_LIMIT } from './discovery.js';
export { expandTemplate, matchTemplate, templateVariables } from './entry-uri.js';
export {
  compileDocumentValidator,
  createRuntimeAjv,
  createToolSchemaCompiler,
} from './json-schema-validator.js';
export {
  DEFAULT_MIGRATION_WINDOW_DAYS,
  effectiveLifecycleOf,
  isOfferable,
  MAX_MIGRATION_WINDOW_DAYS,
} from './lifecycle.js';
export {
  clashingNames,
  idName,
  NAME_SEPARATOR,
  reservedNameProblem,
} from './offered-names.js';
export type { ParamDeclaration, ParamHeaderMismatch } from './param-headers.js';
export { paramDeclarations, paramHeaderMismatch } from './param-headers.js';
export type {
  ReviewAssertion,
  ReviewPasskeyOptions,
  ReviewPasskeyRequest,
  ReviewPasskeys,
  ReviewRef,
} from './review-step-up.js';
export type { SchemaBreak } from './schema-compat.js';
export { findBreakingChanges, isMajorBump } from './schema-compat.js';
export type { ModelText, ModelTextKind } from './schema-model-texts.js';
export { schemaModelTexts } from './schema-model-texts.js';
export { unsupportedPatternProblems } from './schema-patterns.js';
export { schemaTexts } from './schema-texts.js';
export type {
  AgentDiscoveryHit,
  AgentDiscoveryQuery,
  DiscoveryAlternative,
  DiscoveryScope,
  ScopedTool,
  ScopedToolFacts,
} from './scoped-discovery.js';
export { MAX_AGENT_DISCOVERY_LIMIT, ScopedDiscovery, scopeKey } from './scoped-discovery.js';
export type {
  ReviewDecision,
  ReviewInput,
  ReviewStatus,
  SecurityReviewView,
} from './security-review.js';
export {
  MAX_REVIEW_NOTES,
  REVIEW_STATUSES,
  SecurityReviewDesk,
} from './security-review.js';
export type { ReviewReason } from './security-review-policy.js';
export {
  needsReview,
  REVIEW_RULES,
  reviewReasons,
  selfRegistrable,
} from './security-review-policy.js';
export type {
  AccessTier,
  ActionClass,
  Approval,
  Cost,
  DataAccess,
  Egress,
  JsonSchemaObject,
  LifecycleState,
  McpEntry,
  PreviewDeclaration,
  Probe,
  RateLimit,
  ResultAction,
  ResultPolicy,
  Runtime,
  SandboxLimits,
  ToolDefinition,
} from './tool-definition.js';
export {
  ACCESS_TIERS,
  ACTION_CLASSES,
  APPROVAL_FLOOR,
  DATA_ACCESS,
  DEFAULT_SANDBOX_LIMITS,
  LIFECYCLE_STATES,
  RESULT_ACTIONS,
} from './tool-definition.js';
export {
  DOC_HOSTS_SCHEMA,
  TOOL_SCHEMA_ID,
  toolDefinitionSchema,
} from './tool-definition-schema.js';
export type {
  HealthGate,
  HealthReader,
  HealthRefusal,
  HealthState,
  ToolHealthView,
} from './tool-health-view.js';
export { UNCHECKED_HEALTH } from './tool-health-view.js';
export type { ToolRef } from './tool-ref.js';
export { MAX_PINNED_MAJOR, majorOf, parseMajor, parseToolRef } from './tool-ref.js';
export type { ToolVersionDetail, ToolVersionSummary } from './tool-repository.js';
export { scanToolText } from './tool-text-scan.js';
export type { DefinitionCheck } from './validate-definition.js';
export {
  checkToolDefinition,
  MAX_SCHEMA_TEXT_CHARS,
  MAX_SCHEMA_TEXT_TOTAL_CHARS,
} from './validate-definition.js';
