/**
 * @module Decisions a person makes (C4, C8): the approval desk with its tokens, conditions and
 * second factors, and the change desk of four-eyes administrative changes. Anything exported here
 * is public API.
 */

export type { RenderedCall, UntrustedDestination } from '../../core/index.js';
export type { ApprovalCondition, ApprovalRequirement } from './approval-condition.js';
export { approvalRequired } from './approval-condition.js';
export type {
  ApprovalCall,
  ApprovalView,
  ApproveOptions,
  BoundResolution,
  ResolvedApproval,
} from './approval-desk.js';
export { ApprovalDesk, needsStepUp } from './approval-desk.js';
export type { ApprovalOwner } from './approval-owner.js';
export type {
  ApprovalScopeView,
  ScopeCall,
  ScopeDestination,
  ScopeRequest,
  ScopeTerms,
  ScopeUse,
} from './approval-scopes.js';
export {
  destinationsHash,
  MAX_SCOPE_CALLS,
  MAX_SCOPE_MS,
  scopeRefusalOf,
  scopeWords,
  untilIn,
} from './approval-scopes.js';
export type {
  ApprovalBinding,
  ApprovalClaims,
  ApprovalTokenFailureReason,
  ApprovalTokenVerification,
} from './approval-token.js';
export {
  APPROVAL_TOKEN_CLOCK_SKEW_SECONDS,
  APPROVAL_TOKEN_MAX_LENGTH,
  APPROVAL_TOKEN_MAX_TTL_SECONDS,
  APPROVAL_TOKEN_MIN_TTL_SECONDS,
  ApprovalSigner,
  argumentsHash,
} from './approval-token.js';
export type { ApprovalWaitsOptions, WaitOutcome } from './approval-waits.js';
export { ApprovalWaits } from './approval-waits.js';
export type { ChangeView } from './change-desk.js';
export { ChangeDesk } from './change-desk.js';
export type { RequestedChange } from './change-requests.js';
export { requestChangeIn, toolChangeRequester } from './change-requests.js';
export { requireApprover, requireStepUp } from './decider.js';
export { parseDecisionEvidence } from './decision-evidence.js';
export type {
  AuditedEvent,
  DecisionEvidence,
  DecisionProof,
  DecisionProofReport,
  ProofOptions,
  TrustedKey,
} from './decision-proofs.js';
export { DecisionProofs, proveDecisions } from './decision-proofs.js';
export type {
  OperatorSecondFactorsOptions,
  SecondFactorEnrolment,
} from './operator-second-factors.js';
export { OPERATOR_ID_PATTERN, OperatorSecondFactors } from './operator-second-factors.js';
export type { RelyingParty } from './passkey-challenges.js';
export { recordPasskeyRequirement, reviewPasskeys } from './passkey-decisions.js';
export type {
  OperatorPasskeysOptions,
  PasskeyEnrolment,
  PasskeyView,
  VerifiedDecision,
} from './passkeys.js';
export { OperatorPasskeys } from './passkeys.js';
export type { RequestStateClaims } from './request-state.js';
export {
  REQUEST_STATE_KEY_LABEL,
  REQUEST_STATE_TTL_MS,
  RequestStateSealer,
} from './request-state.js';
export {
  DEFAULT_SECOND_FACTOR_LIMITS,
  SecondFactorGuard,
  type SecondFactorLimits,
  type SecondFactorState,
} from './second-factor-guard.js';
export type { SessionApprovalStatus } from './session-approvals.js';
export { SessionApprovals } from './session-approvals.js';
export { SignInFactors } from './sign-in-factors.js';
export type { TotpVerification } from './totp.js';
export { generateTotpSecret, TOTP_DIGITS, totpAt, totpUri, verifyTotp } from './totp.js';
