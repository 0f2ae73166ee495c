/**
 * @module What a caller may hand a call besides its arguments so that a long upstream tool is
 * not a black box: a callback for the upstream's progress, and a signal that withdraws the call.
 */

export type { CallProgress } from '../core/index.js';

/** The rule and message of a call its caller cancelled (CALL_CANCELLED, outcome `cancelled`). */
export const CANCELLED = {
  code: 'CALL_CANCELLED',
  rule: 'call.cancelled',
  message: 'the caller cancelled the call',
} as const;
