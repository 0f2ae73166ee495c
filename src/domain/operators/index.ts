/** @module Operators: accounts, roles and how they authenticate. Anything exported here is public API. */

export {
  apartFrom,
  genesisOpen,
  isGenesisAdmin,
  type NotApart,
  recordHandOver,
} from './confirmation.js';
export type { ConsoleSessionGrant, ConsoleSessionView } from './console-sessions.js';
export {
  ConsoleSessions,
  DEFAULT_CONSOLE_IDLE_MS,
  DEFAULT_CONSOLE_LIFETIME_MS,
  endSessionsOf,
} from './console-sessions.js';
export {
  DEFAULT_LOGIN_LIMITS,
  type LoginLimits,
} from './login-guard.js';
export type { Operator, OperatorAuthentication, OperatorRole } from './operator.js';
export {
  BOOTSTRAP_ACTOR_ID,
  BOOTSTRAP_OPERATOR,
  DEMO_SEED_OPERATOR_ID,
  hasRole,
  isBootstrap,
  OPERATOR_ROLES,
  operatorActor,
  signedInWithPassword,
} from './operator.js';
export type { OperatorApplied, OperatorDocument } from './operator-apply.js';
export {
  applyOperatorsForbidden,
  disableRefusalIn,
  operatorCredentialProblems,
  operatorDocumentProblems,
  operatorDocumentSchema,
} from './operator-apply.js';
export type {
  ActionRule,
  Asking,
  OperatorAccounts,
  OperatorAction,
  OperatorRefusal,
  OperatorRefusals,
} from './operator-authority.js';
export {
  holdsAny,
  isOperatorAction,
  OPERATOR_ACTIONS,
  OperatorAuthority,
  rolesOf,
} from './operator-authority.js';
export { enabledAdmins, holdAccountsIn, keepAnAdminIn, writeAccounts } from './operator-lock.js';
export type {
  IssuedToken,
  OidcIdentity,
  OperatorSpec,
  OperatorUpdate,
  OperatorView,
  TokenSpec,
  TokenView,
} from './operator-records.js';
export {
  FIRST_ADMIN_SET_UP_KEY,
  firstAdminSetUp,
  latchFirstAdminSetUp,
  latchPersonActed,
  loginRefused,
  refuseBootstrapAfterSetup,
  refuseBootstrapOnSso,
} from './operator-records.js';
export type { OperatorServiceOptions } from './operator-service.js';
export { OperatorService } from './operator-service.js';
export {
  checkLocalId,
  OPERATOR_ID_PATTERN,
  oidcOperatorId,
  RESERVED_OPERATOR_IDS,
} from './operator-spec.js';
export {
  type Argon2Params,
  checkPasswordStrength,
  DEFAULT_ARGON2,
  hashPassword,
  MIN_PASSWORD_LENGTH,
  needsRehash,
  verifyPassword,
} from './password-hash.js';
export { isPersonalToken, MAX_TOKEN_DAYS, MIN_TOKEN_DAYS } from './personal-token.js';
export {
  auditRefusal,
  auditRefusalAs,
  type FourEyesReason,
  FourEyesRefused,
  type OperatorAct,
} from './refusal-audit.js';
export type { SecondFactorCheck, SignInFactor } from './second-factor-port.js';
