/**
 * @module What a reviewer sees of a call that waits for approval: the resolved call (checked URL
 * and path arguments, the hosts it may reach), never the model's account of it.
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
