/**
 * @module Limits and budgets (C7) with their own store access: rate limits per run, window and
 * agent × tool, session budgets (external sends, egress bytes, spend), a call's cost, and the
 * agent's rolling ceilings and cross-session flow marks. The gate's limits and flow steps reach
 * the counters only through `CallCounters` (docs/architecture.md §5: the gate reads no table).
 */
export type { CeilingCall } from './call-counters.js';
export { CallCounters } from './call-counters.js';
export type { Admission, CallFacts } from './ceilings.js';
export {
  admitCall,
  chargeEgress,
  DEFAULT_CALLS_PER_TOOL,
  DEFAULT_CEILING_WINDOW_SECONDS,
  DEFAULT_EXTERNAL_SENDS,
  DEFAULT_FLOW_WINDOW_SECONDS,
  DEFAULT_SESSION_BUDGETS_PER_DAY,
  DEFAULT_UNTRUSTED_WINDOW_SECONDS,
  effectiveWindows,
  untrustedSince,
} from './ceilings.js';
export type { LimitCheck } from './limits.js';
export { checkSpentBudgets } from './limits.js';
export type { CostReading } from './spend.js';
export { costOf } from './spend.js';
