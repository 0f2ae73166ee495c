/**
 * @module What the MCP front asks of the HTTP server's admission (src/edge/rest): a request's
 * ticket, and the bounds on standing streams and waits. Both eras' request paths use them.
 */
import type { ToolgateError } from '../../core/index.js';

/**
 * The admission ticket of one request as this front uses it (the HTTP server's, src/edge/rest): claim
 * it for the principal; give the slot back while the request stands and take it again after.
 */
export interface RequestHold {
  /** A refusal (429) when the agent's or the user's share of running requests is used up. */
  claim(agentId: string, userId: string | undefined): ToolgateError | null;
  pause(): void;
  resume(): Promise<ToolgateError | null>;
}

/** Bounds on standing streams or waits, per agent, per user and overall (src/edge/rest). */
export interface StandingBound {
  enter(
    agentId: string,
    userId: string | undefined,
    evict: () => void,
  ):
    | { readonly ok: true; readonly close: () => void }
    | { readonly ok: false; readonly error: ToolgateError };
}
