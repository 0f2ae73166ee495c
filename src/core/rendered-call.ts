/**
 * @module What a reviewer sees of a call that waits for approval: the resolved call (checked URL
 * and path arguments, the hosts it may reach), never the model's account of it; every reason it
 * waits (approval-reasons.ts); what it costs; and, where its tool declares one, the result of a
 * read-only preview of the state it would change (untrusted text, never used for the decision).
 */
import type { ApprovalReason, CallCost } from './approval-reasons.js';
export interface RenderedCall {
  readonly tool: string;
  readonly version: string;
  readonly action_class: string;
  readonly arguments: unknown;
  readonly destination_hosts: readonly string[];
  readonly conditions: readonly unknown[];
  readonly second_factor: boolean;
  readonly out_of_band: boolean;
  /**
   * Destination-like values in the arguments that the run first saw in an untrusted result, and
   * where (docs/architecture.md §3): why a call that would not otherwise wait is escalated.
   */
  readonly untrusted_destinations?: readonly UntrustedDestination[];
  /**
   * Set when the call waits because instruction-like text entered its session through an
   * untrusted result (docs/architecture.md §3, step `approval`): the untrusted sources of the session.
   */
  readonly after_injection?: { readonly untrusted_sources: readonly string[] };
  /**
   * Every reason the call waits, as the gate found them (docs/architecture.md §3, step
   * `approval`); absent on approvals recorded before the list was kept (reasonsOf rebuilds it).
   */
  readonly reasons?: readonly ApprovalReason[];
  /** What the call costs and what its session has left, when asked. */
  readonly cost?: CallCost;
  /** The declared preview's outcome, attached once it ran (docs/architecture.md §3, "Previews"). */
  readonly preview?: CallPreview;
}

/**
 * A read-only preview of what a mutation would change, run by the gate under the same rules as
 * any call. Its text is untrusted: shown to the reviewer, never read by any decision.
 */
export interface CallPreview {
  /** The preview tool and the version that ran (null when it was refused before resolving). */
  readonly tool: string;
  readonly version: string | null;
  /** `running` until it ends; `ok` with text; `refused` or `failed` with the reason. */
  readonly status: 'running' | 'ok' | 'refused' | 'failed';
  readonly call_id: string | null;
  /** The result as text (bounded; `truncated` says it was cut), null unless `ok`. */
  readonly text: string | null;
  readonly truncated: boolean;
  /** Always `untrusted`: a preview's result is what a tool returned. */
  readonly trust: 'untrusted';
  /** Instruction-like text the result scan found in it. */
  readonly injection: boolean;
  readonly code: string | null;
  readonly rule: string | null;
  readonly message: string | null;
}

/** A value of the call first seen in an untrusted result of the same run. */
export interface UntrustedDestination {
  /** email, url, host, iban, account, phone, handle or channel. */
  readonly kind: string;
  /** JSON pointer of the argument that carries it. */
  readonly argument: string;
  /** The tool whose result it first appeared in, that call's id, and when (ISO 8601 UTC). */
  readonly tool_id: string;
  readonly call_id: string;
  readonly first_seen_at: string;
}
