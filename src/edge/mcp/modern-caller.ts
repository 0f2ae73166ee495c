/**
 * @module Who asks in one 2026-07-28 request, as the built-once server's handlers see it
 * (modern-server.ts, modern-entries.ts): the principal, its runs, and the answer to a run that is
 * not theirs.
 */
import type { AgentPrincipal } from '../../core/index.js';
import type { StandBy } from './approval-hold.js';
import type { RunResolver } from './run-meta.js';

/** Who asks in one request, and which runs are theirs. */
export interface ModernCaller {
  readonly principal: AgentPrincipal;
  /** Resolves or mints the run a request belongs to (the default run is the principal's). */
  readonly runs: RunResolver;
  /**
   * A tools/call over HTTP: its `Mcp-Param-*` headers as sent, handed to the gate as they are
   * (`mcpParamHeaders`, step `headers`). Absent on stdio, which has no headers.
   */
  readonly paramHeaders?: Readonly<Record<string, string>>;
  /** Over HTTP: the request's `traceparent` header as sent (the call's trace, gate-call.ts). */
  readonly traceparent?: string | undefined;
  /**
   * Over HTTP: runs a held call's wait for its approval as a standing wait (without the request's
   * slot, counted per principal: approval-hold.ts). Absent on stdio, the principal's own pipe.
   */
  readonly standBy?: StandBy | undefined;
}

/** What the handlers of one request use: the caller, as the gate binds runs to it. */
export interface RequestCaller extends ModernCaller {
  /** The principal as the authenticator built it: what the gate binds a run to. */
  readonly who: AgentPrincipal;
  /** The answer to a run that is gone or another principal's (throws its protocol error). */
  refused(handle: string, err: unknown): Promise<never>;
}
