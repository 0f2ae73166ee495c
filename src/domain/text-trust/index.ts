/** @module What a model reads from a tool: the result scan, the result policy and the trust label. */

export type { Finding, FindingKind } from '../../core/index.js';
export { findPersonalData } from '../../core/index.js';
export type { DestinationKind, DestinationLiteral, LiteralScan } from './destination-literals.js';
export {
  argumentLiteralsOf,
  destinationLiteralsOf,
  literalHash,
  MAX_LITERALS_PER_ARGUMENTS,
  MAX_LITERALS_PER_RESULT,
  scanArgumentLiterals,
  scanResultLiterals,
} from './destination-literals.js';
export { findInjection } from './injection-findings.js';
export type { EffectiveResultPolicy } from './result-policy.js';
export { DEFAULT_RESULT_ACTIONS, derivedSource, resultPolicyOf } from './result-policy.js';
export type { ResultScan } from './result-scan.js';
export { MAX_SCAN_DEPTH, scanResult } from './result-scan.js';
export { findSecrets } from './secret-findings.js';
export type { LabelledFinding, TrustLabel } from './trust-label.js';
export { carriesUntrustedText, MAX_LABELLED_FINDINGS, TRUST_META_KEY } from './trust-label.js';
