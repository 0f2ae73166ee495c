/**
 * @module The shape of a tool in a session's permitted set (the rows of `sessions.tool_set`), in a
 * file of its own so the naming (export-names.ts) and the token narrowing (token-scopes.ts) read it
 * without importing the session service that uses them.
 */
export interface SessionTool {
  readonly id: string;
  /** The default version: the newest active one the session may use (else the newest deprecated). */
  readonly version: string;
  /** The name the model sees; unique within the session. */
  readonly name: string;
  /**
   * The other majors of this tool the session may call by pinning (`name@1`), each its newest
   * offerable version that passed the same grant, tier and toxic-combination rules (C2). Absent
   * when there are none.
   */
  readonly pins?: readonly SessionPin[];
}

/** One more major of a tool a session may call when the caller pins it. */
export interface SessionPin {
  readonly major: number;
  readonly version: string;
}

export interface WithheldTool {
  readonly id: string;
  readonly version: string;
  readonly reason: string;
}
