/**
 * @module What a reviewer sees of a call that waits for approval: the resolved call (checked URL
 * and path arguments, the hosts it may reach), never the model's account of it; every reason it
 * waits (approval-reasons.ts); what it costs; and, where its tool declares one, the result of a
 * read-only preview of the state it would change (untrusted text, never used for the decision).
 */
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
  /**
   * The values of the tool's destination and URL arguments (a URL by its host), in checked form:
   * what an approval given with a scope binds (docs/operators-and-approvals.md, "Scoped
   * approvals"); absent on approvals recorded before scopes, which cannot be given one.
   */
  readonly destination_values?: readonly { readonly argument: string; readonly value: string }[];
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

/** Where instruction-like text entered the run, and what the scan flagged there. */
export interface FlaggedText {
  /** The tool whose result held it, that call's id, and when (ISO 8601 UTC). */
  readonly tool_id: string;
  readonly call_id: string;
  readonly at: string;
  /** The scan's rules that matched (`injection.*`), at most a few. */
  readonly rules: readonly string[];
  /** The flagged span with a little context, bounded; untrusted text, shown as text. */
  readonly excerpt: string | null;
}

/** One reason a call waits. `rule` is the audit rule that names it. */
export type ApprovalReason =
  /** The action class's default gate asks for every call (docs/architecture.md §1). */
  | { readonly kind: 'action_class'; readonly rule: string; readonly action_class: string }
  /** The tool's own definition asks for every call, beyond its action class's default. */
  | { readonly kind: 'definition'; readonly rule: 'approval.definition'; readonly mode: string }
  /** One of the tool's approval conditions held (or could not be evaluated: fails closed). */
  | {
      readonly kind: 'condition';
      readonly rule: 'approval.condition';
      readonly argument: string;
      readonly op: string;
      readonly value: unknown;
    }
  /** Instruction-like text entered the session (or the run, or the principal's window). */
  | {
      readonly kind: 'after_injection';
      readonly rule: 'provenance.injection_seen';
      readonly untrusted_sources: readonly string[];
      readonly flagged: readonly FlaggedText[];
    }
  /** Argument values first seen in an untrusted result of the run. */
  | {
      readonly kind: 'untrusted_destination';
      readonly rule: 'provenance.untrusted_destination';
      readonly destinations: readonly UntrustedDestination[];
    };

/** What the call costs and what the session has left, as the gate saw it when it asked. */
export interface CallCost {
  readonly cents: number;
  /** The session's spend budget and what is left of it; null when the agent has none. */
  readonly spend_budget_cents: number | null;
  readonly spend_left_cents: number | null;
  /** The session's external-send budget and what is left; null when none (or not a send). */
  readonly external_sends_budget: number | null;
  readonly external_sends_left: number | null;
}
