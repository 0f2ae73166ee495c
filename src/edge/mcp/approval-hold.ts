/**
 * @module Holding a call that waits for approval open, for both MCP eras (C15, docs/mcp.md
 * "Stock clients wait for the person"). A stock client (the official SDKs with their default
 * options) neither polls a toolgate status route nor knows toolgate's `_meta`: what it can do is
 * wait for its request's answer, up to its own request timeout (60 s for the TypeScript SDKs).
 * So the front holds the call, at most `waitMs` — safely below that timeout — until the approval
 * leaves `pending`, and then asks the gate again with the approval bound; the gate decides (runs
 * it once, or refuses it). The hold is a standing wait: it gives the request's slot back and is
 * counted per agent and per user (`standBy`, the front's), and a stop ends it (answered pending).
 * A client that sent a progress token hears where the approval is decided while it waits.
 */
import type { AgentApi, CallOptions, GateDecision } from '../../api/index.js';
import type { AgentPrincipal, CallProgress } from '../../core/index.js';
import type { ToolCall } from './gate-call.js';

/**
 * Runs `wait` as a standing wait: without the request's slot, counted and bounded for the
 * principal; `wait` must end when its signal aborts (a stop, or the principal's bound making room
 * for another). `{ ok: false }` when the wait was refused, or the slot could not be had again
 * after it: the call is then answered as still pending.
 */
export type StandBy = <T>(
  wait: (signal: AbortSignal) => Promise<T>,
) => Promise<{ readonly ok: true; readonly value: T } | { readonly ok: false }>;

/** How a front holds calls that wait for approval. */
export interface ApprovalHold {
  /** The longest one answer is held; 0 answers at once. */
  readonly waitMs: number;
  /** The front's standing-wait accounting; absent (stdio: one principal's own pipe): as is. */
  readonly standBy?: StandBy | undefined;
}

/**
 * The default bound: below the 60 s request timeout of both TypeScript SDKs with room for the
 * call to run once approved; the v2 client's 10 rounds then cover about eight minutes.
 */
export const DEFAULT_APPROVAL_WAIT_MS = 45_000;
/**
 * The `_meta` key a client sets to shorten the hold of its call (milliseconds; 0: answer at once):
 * a client that follows pending approvals itself (toolgate's own SDK) or that knows its timeout is
 * shorter than the gateway's bound. It never lengthens the hold beyond the bound.
 */
export const APPROVAL_WAIT_META_KEY = 'io.toolgate/approval-wait';

/** The hold of one call: the bound, or less when the call's `_meta` asks for less. */
export function holdOf(
  hold: ApprovalHold,
  meta: Record<string, unknown> | undefined,
): ApprovalHold {
  const asked = meta?.[APPROVAL_WAIT_META_KEY];
  if (typeof asked !== 'number' || !Number.isFinite(asked) || asked < 0) return hold;
  return { ...hold, waitMs: Math.min(hold.waitMs, Math.floor(asked)) };
}

/** How often a client that asked for progress hears that its call still waits. */
const HEARTBEAT_MS = 15_000;

type Pending = Extract<GateDecision, { kind: 'pending_approval' }>;

/** Where a pending approval is decided, in words a person at the client can act on. */
export function whereDecided(approvalId: string): string {
  return `an operator decides it in the toolgate console (Approvals) or with \`toolgate approvals approve ${approvalId}\``;
}

/**
 * Holds `pending` until its approval leaves `pending` or the bound passes. True: it left (ask the
 * gate again with it bound); false: answer the call as still pending. Never throws.
 */
export async function holdForApproval(
  agent: Pick<AgentApi, 'awaitApproval'>,
  who: { readonly principal: AgentPrincipal; readonly sessionId: string },
  pending: Pending,
  hold: ApprovalHold,
  io: { readonly signal: AbortSignal; readonly call: Pick<ToolCall, 'progress'> },
): Promise<boolean> {
  if (hold.waitMs <= 0 || io.signal.aborted) return false;
  const wait = async (stop: AbortSignal): Promise<boolean> => {
    const both = AbortSignal.any([io.signal, stop]);
    const beat = heartbeat(io.call, pending.approvalId, both);
    try {
      const outcome = await agent.awaitApproval(who.sessionId, who.principal, pending.approvalId, {
        timeoutMs: hold.waitMs,
        signal: both,
      });
      return outcome === 'settled';
    } catch {
      // The run is gone, or the store cannot say: answered as still pending.
      return false;
    } finally {
      beat();
    }
  };
  if (!hold.standBy) return wait(new AbortController().signal);
  const waited = await hold.standBy(wait);
  return waited.ok && waited.value;
}

/**
 * Tells a client that asked for progress (its token) that the call waits, at once and every
 * HEARTBEAT_MS; returns the stop. Clients without a token hear nothing (`progress` is a no-op).
 */
function heartbeat(
  call: Pick<ToolCall, 'progress'>,
  approvalId: string,
  signal: AbortSignal,
): () => void {
  let n = 0;
  const report = (): void => {
    n += 1;
    const p: CallProgress = {
      progress: n,
      message: `waiting for approval ${approvalId}: ${whereDecided(approvalId)}`,
    };
    call.progress(p);
  };
  report();
  const timer = setInterval(report, HEARTBEAT_MS);
  timer.unref();
  const stop = () => clearInterval(timer);
  signal.addEventListener('abort', stop, { once: true });
  return () => {
    stop();
    signal.removeEventListener('abort', stop);
  };
}

/** The approval a held call waited for, bound for the gate's second look (`via: 'wait'`). */
export function heldApproval(pending: Pending): NonNullable<CallOptions['boundApproval']> {
  return {
    approvalId: pending.approvalId,
    toolId: pending.rendered.tool,
    toolVersion: pending.rendered.version,
    argsHash: pending.argsHash,
    via: 'wait',
  };
}
