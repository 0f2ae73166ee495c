/**
 * @module Pure domain of toolgate: ids, errors, problems. Anything exported here is public API.
 */
export type { Actor } from './actor.js';
export { checkActor, isPrintableName, systemActor } from './actor.js';
export {
  type ApprovalDisplay,
  argumentsText,
  costLine,
  destinationLine,
  displayOf,
  flaggedLine,
  reasonHeadline,
  reasonLines,
  reasonsOf,
} from './approval-reasons.js';
export { canonicalHash, canonicalJson, sha256Hex } from './canonical-json.js';
export type { CapDetails } from './cap-details.js';
export type { Clock } from './clock.js';
export { addDays, DAY_MS, systemClock } from './clock.js';
export { closeInOrder } from './close-in-order.js';
export type {
  DecisionCommitment,
  DecisionKind,
  DecisionSubject,
  StoredAssertionRef,
} from './decision-commitment.js';
export {
  assertionDetails,
  decisionChallenge,
  decisionCommitment,
  subjectDifferences,
} from './decision-commitment.js';
export { exceedsDepth, MAX_DOCUMENT_DEPTH, memberCount } from './depth.js';
export type { EndpointUrlRules } from './endpoint-url.js';
export { endpointUrlProblem, isLoopbackHost } from './endpoint-url.js';
export type {
  ErrorBody,
  ErrorCode,
  ErrorDetails,
  RequestStateRefusal,
} from './errors.js';
export { ERROR_CODES, internalErrorBody, isToolgateError, ToolgateError } from './errors.js';
export type { FairCandidate } from './fair-share.js';
export { chooseFairVictim } from './fair-share.js';
export type { Finding, FindingKind } from './finding.js';
export { decodeHeaderValue } from './header-value.js';
export type { AgentId, Brand, EventSeq, ToolId } from './ids.js';
export {
  AGENT_ID_PATTERN,
  asAgentId,
  asToolId,
  CAPABILITY_PATTERN,
  isAgentId,
  isToolId,
  OWNER_PATTERN,
  TOOL_ID_PATTERN,
  timeOrderedId,
} from './ids.js';
export {
  type JsonDiff,
  jsonDiff,
  MAX_LISTED_PATHS,
  type PathChange,
} from './json-diff.js';
export { ASYMMETRIC_JWS_ALGS } from './jws-algs.js';
export {
  type DiffLine,
  type DiffRow,
  lineDiff,
  MAX_DIFF_EDITS,
  MAX_DIFF_LINES,
  withContext,
} from './line-diff.js';
export { foreignOwner, makeDirs, makePrivateDirs, narrowPrivateDir } from './make-dirs.js';
export type { Mutable } from './mutable.js';
export type { Outbound, OutboundProblem } from './outbound.js';
export type { Page, PageKey, PageRequest } from './page.js';
export {
  DEFAULT_PAGE_LIMIT,
  decodeCursor,
  encodeCursor,
  MAX_PAGE_LIMIT,
  pageFromRows,
  pageLimit,
  pageOf,
  useCursorKey,
} from './page.js';
export { parseFileText, where as textPosition } from './parse-file-text.js';
export type { PasskeyRefusal } from './passkey-refusal.js';
export { findPersonalData } from './personal-data.js';
export type { AgentPrincipal, OperatorPrincipal, Principal, PrincipalUser } from './principal.js';
export { isPrintableText } from './printable-text.js';
export type { Problem } from './problem.js';
export { joinPointer, pointerToken, prefixProblems, problem } from './problem.js';
export type { ProblemDetails } from './problem-details.js';
export {
  PROBLEM_JSON,
  PROBLEM_TYPE_BASE,
  prefersProblemDetails,
  problemDetails,
} from './problem-details.js';
export {
  MAX_SECRET_FILE_BYTES,
  notRegularFile,
  readBoundedFile,
  regularFileStats,
} from './read-bounded-file.js';
export type {
  ApprovalReason,
  CallCost,
  CallPreview,
  FlaggedText,
  RenderedCall,
  UntrustedDestination,
} from './rendered-call.js';
export type { SecretPattern } from './secret-patterns.js';
export { SECRET_PATTERNS } from './secret-patterns.js';
export { isStoreCorrupt, StoreCorruptError } from './store-corrupt.js';
export { syncPath } from './sync-path.js';
export type { CallProgress, McpToolResult } from './tool-result.js';
export type { TraceOrigin, TraceParent } from './trace-context.js';
export {
  formatTraceparent,
  parseTraceparent,
  REQUEST_ID_MAX,
  requestIdOf,
  traceParentOf,
} from './trace-context.js';
export {
  codePointEscape,
  UNPRINTABLE_CLASS,
  visibleEscapes,
  visibleJsonEscapes,
} from './visible-text.js';
