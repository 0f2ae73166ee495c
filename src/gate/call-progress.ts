/**
 * @module What a caller may hand a call besides its arguments so that a long upstream tool is
 * not a black box: a callback for the upstream's progress, and a signal that withdraws the call.
 */

/** One progress report of a running call, as the upstream MCP tool sent it. */
export interface CallProgress {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/** The rule and message of a call its caller cancelled (CALL_CANCELLED, outcome `cancelled`). */
export const CANCELLED = {
  code: 'CALL_CANCELLED',
  rule: 'call.cancelled',
  message: 'the caller cancelled the call',
} as const;
