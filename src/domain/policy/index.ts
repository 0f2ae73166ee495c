/**
 * @module Argument policy (C6): URL, path and size rules as pure checks, and the
 * schema walk that says which arguments they apply to. Anything exported here is public API.
 */

export type { CedarDecision, CedarRequest, PolicySource } from './cedar/index.js';
export { CedarPolicyEngine } from './cedar/index.js';
export type { CodeLanguage, CodeVerdict, PythonGuardOptions } from './code/index.js';
export {
  CODE_LANGUAGES,
  checkCode,
  checkJavaScript,
  checkPython,
  MAX_CODE_CHARS,
  PARSE_TIMEOUT_MS,
  UNCHECKABLE_CODE_RULES,
} from './code/index.js';
export type {
  DestinationAllow,
  DestinationRule,
  DestinationRuleKind,
  DestinationVerdict,
  SetMembership,
} from './destination-policy.js';
export {
  checkDestination,
  DESTINATION_KINDS,
  destinationDomain,
  destinationValues,
  emailDomainAdmits,
  normaliseDestination,
} from './destination-policy.js';
export type {
  DestinationSetDocument,
  DestinationSetSpec,
  DestinationSetView,
  DirectorySource,
} from './destination-set-spec.js';
export {
  DESTINATION_SET_NAME_PATTERN,
  destinationSetDocumentSchema,
  destinationSetProblems,
  destinationSetSpecSchema,
  MAX_SET_MEMBERS,
  normaliseMembers,
} from './destination-set-spec.js';
export type { SetSaved } from './destination-set-writes.js';
export type { DirectoryReader } from './destination-sets.js';
export { DestinationSets } from './destination-sets.js';
export type { PathRule } from './path-policy.js';
export { checkPath, MAX_PATH_LENGTH } from './path-policy.js';
export type { PolicyEngine, PolicySupplier } from './policy-engine.js';
export type { PolicySpec } from './policy-service.js';
export { PolicyService, policySpecSchema } from './policy-service.js';
export type { PolicyTarget, PolicyTargetKind } from './policy-targets.js';
export {
  MAX_SCHEMA_DEPTH,
  MAX_SCHEMA_VISITS,
  policyTargets,
  URL_FORMATS,
  valuesAt,
} from './policy-targets.js';
export type { PolicyVerdict } from './policy-verdict.js';
export { excerpt, MAX_ECHO_CHARS } from './policy-verdict.js';
export type { SizeLimits } from './size-policy.js';
export { checkSizes } from './size-policy.js';
export type { UrlRule } from './url-policy.js';
export { checkUrl, isCanonicalDnsName, isIpLiteral, MAX_URL_LENGTH } from './url-policy.js';
