/**
 * @module Previews for reviewers (docs/architecture.md §3, "Previews"): when a call of a tool that
 * declares a `preview` opens an approval, the gate calls the declared read tool in the caller's
 * own session through every step a call meets — grant, policy, flow, limits, sandbox, egress, the
 * result scan and the audit — with arguments taken from the waiting call's resolved arguments,
 * and attaches the outcome to the approval as untrusted text. Deny by default: only a `read` that
 * needs no approval runs (the `approval` step refuses anything else, `preview.*`), bounded in time
 * and in the text kept, a few at a time per process. Nothing decides from a preview; a preview
 * that is refused or fails leaves the approval as it was, with the reason shown. Never awaited on
 * the caller's path, never throws.
 */
import type { CallPreview } from '../core/index.js';
import type { ApprovalDesk } from '../domain/decisions/index.js';
import type { CallContext, CallOptions } from './call-context.js';
import type { GateDecision } from './decision.js';

/** How the gate is asked to run a call (Gate.invoke). */
export type InvokeCall = (
  ctx: CallContext,
  toolRef: unknown,
  args: unknown,
  options: CallOptions,
) => Promise<GateDecision>;

export interface PreviewBounds {
  /** Wall time of one preview from start to attached outcome. */
  readonly timeoutMs: number;
  /** Characters of the result's text kept on the approval. */
  readonly maxChars: number;
  /** Previews running at once in this process; past it a preview is refused, not queued. */
  readonly maxInFlight: number;
  /**
   * Of those, at most this many for one agent: an agent whose calls wait cannot take every slot
   * and leave the reviewers of other agents' calls without a preview (attack round 23, F3).
   */
  readonly maxPerAgent: number;
}

export const DEFAULT_PREVIEW_BOUNDS: PreviewBounds = Object.freeze({
  timeoutMs: 5_000,
  maxChars: 16_384,
  maxInFlight: 8,
  maxPerAgent: 2,
});

/** Failures of the tool's run (it was allowed to run) rather than refusals before it. */
const RUN_FAILURES = new Set([
  'EXECUTION_FAILED',
  'SANDBOX_TIMEOUT',
  'SANDBOX_LIMIT',
  'SANDBOX_UNAVAILABLE',
  'EGRESS_DENIED',
  'OUTPUT_INVALID',
  'RESULT_BLOCKED',
  'CALL_CANCELLED',
  'CREDENTIAL_UNAVAILABLE',
]);

/** What a waiting call hands the runner. */
export interface PreviewRequest {
  readonly ctx: CallContext;
  readonly approvalId: string;
  readonly declaration: {
    readonly tool: string;
    readonly arguments: Readonly<Record<string, string>>;
  };
  /** The waiting call's arguments as the gate resolved them. */
  readonly callArgs: unknown;
}

/** The value at an RFC 6901 pointer (own properties only); undefined when it names nothing. */
function valueAt(document: unknown, pointer: string): unknown {
  if (pointer === '') return document;
  let node = document;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, token)) return undefined;
    node = (node as Record<string, unknown>)[token];
  }
  return node;
}

/** The preview's arguments: each declared name gets the value its pointer names, if any. */
export function previewArguments(
  declared: Readonly<Record<string, string>>,
  callArgs: unknown,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, pointer] of Object.entries(declared)) {
    const value = valueAt(callArgs, pointer);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

function base(tool: string): Omit<CallPreview, 'status'> {
  return {
    tool,
    version: null,
    call_id: null,
    text: null,
    truncated: false,
    trust: 'untrusted',
    injection: false,
    code: null,
    rule: null,
    message: null,
  };
}

/** The result as text: a string as it is, anything else as indented JSON; cut at `max`. */
function textOf(output: unknown, max: number): { text: string; truncated: boolean } {
  const whole = typeof output === 'string' ? output : (JSON.stringify(output, null, 2) ?? 'null');
  return whole.length > max
    ? { text: whole.slice(0, max), truncated: true }
    : { text: whole, truncated: false };
}

export class PreviewRunner {
  readonly #invoke: InvokeCall;
  readonly #approvals: Pick<ApprovalDesk, 'attachPreview'>;
  readonly #bounds: PreviewBounds;
  readonly #running = new Set<Promise<void>>();
  readonly #perAgent = new Map<string, number>();

  constructor(
    invoke: InvokeCall,
    approvals: Pick<ApprovalDesk, 'attachPreview'>,
    bounds: PreviewBounds = DEFAULT_PREVIEW_BOUNDS,
  ) {
    this.#invoke = invoke;
    this.#approvals = approvals;
    this.#bounds = bounds;
  }

  /** Starts the preview of a newly opened approval; returns at once. */
  start(req: PreviewRequest): void {
    const tool = req.declaration.tool;
    if (this.#running.size >= this.#bounds.maxInFlight) {
      void this.#attach(req.approvalId, {
        ...base(tool),
        status: 'refused',
        code: 'RATE_LIMITED',
        rule: 'preview.busy',
        message: 'too many previews are running on this gateway; none was run for this call',
      });
      return;
    }
    const agent = req.ctx.principal.agentId;
    const own = this.#perAgent.get(agent) ?? 0;
    if (own >= this.#bounds.maxPerAgent) {
      void this.#attach(req.approvalId, {
        ...base(tool),
        status: 'refused',
        code: 'RATE_LIMITED',
        rule: 'preview.agent_busy',
        message: "this agent's share of the previews is running; none was run for this call",
      });
      return;
    }
    this.#perAgent.set(agent, own + 1);
    const p = this.#run(req).catch(() => {});
    this.#running.add(p);
    void p.finally(() => {
      this.#running.delete(p);
      const left = (this.#perAgent.get(agent) ?? 1) - 1;
      if (left > 0) this.#perAgent.set(agent, left);
      else this.#perAgent.delete(agent);
    });
  }

  /** Resolves when every preview started so far has attached its outcome (tests, close). */
  async settled(): Promise<void> {
    await Promise.all([...this.#running]);
  }

  async #run(req: PreviewRequest): Promise<void> {
    const tool = req.declaration.tool;
    await this.#attach(req.approvalId, { ...base(tool), status: 'running' });
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => {
        controller.abort();
        resolve('timeout');
      }, this.#bounds.timeoutMs);
    });
    const args = previewArguments(req.declaration.arguments, req.callArgs);
    const call = this.#invoke(req.ctx, tool, args, {
      signal: controller.signal,
      previewFor: req.approvalId,
    });
    try {
      const decision = await Promise.race([call, timeout]);
      await this.#attach(req.approvalId, this.#outcome(tool, decision));
    } catch {
      await this.#attach(req.approvalId, {
        ...base(tool),
        status: 'failed',
        code: 'INTERNAL',
        rule: 'preview.error',
        message: 'the preview could not be run',
      });
    } finally {
      clearTimeout(timer);
    }
  }

  #outcome(tool: string, decision: GateDecision | 'timeout'): CallPreview {
    if (decision === 'timeout') {
      return {
        ...base(tool),
        status: 'failed',
        code: 'SANDBOX_TIMEOUT',
        rule: 'preview.timeout',
        message: `the preview did not finish within ${this.#bounds.timeoutMs} ms`,
      };
    }
    switch (decision.kind) {
      case 'allow': {
        const { text, truncated } = textOf(decision.output, this.#bounds.maxChars);
        return {
          ...base(tool),
          status: 'ok',
          version: decision.version,
          call_id: decision.callId,
          text,
          truncated,
          injection: decision.trust?.injection === true,
        };
      }
      case 'deny':
        return {
          ...base(tool),
          status: RUN_FAILURES.has(decision.code) ? 'failed' : 'refused',
          call_id: decision.callId,
          code: decision.code,
          rule: decision.rule,
          message: decision.message,
        };
      case 'pending_approval':
        // The approval step refuses a preview that would wait; this is a broken step list.
        return {
          ...base(tool),
          status: 'refused',
          call_id: decision.callId,
          code: 'POLICY_DENIED',
          rule: 'preview.needs_approval',
          message: 'the preview tool would need an approval of its own',
        };
    }
  }

  async #attach(approvalId: string, preview: CallPreview): Promise<void> {
    await this.#approvals.attachPreview(approvalId, preview).catch(() => false);
  }
}
