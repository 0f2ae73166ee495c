/**
 * @module The port through which toolgate sends to a URL a person configured (reviewer webhooks,
 * owner channels; docs/security-model.md "Outbound requests that people configure"). Its one
 * implementation is the tool-egress rules (src/execution/sandbox/egress/outbound.ts), handed to each wing
 * by the composition root, so a wing that may not import the sandbox still goes out under them.
 */

/** Why a configured URL is refused: the rule (an `egress.*` or `outbound.*` name) and a text. */
export interface OutboundProblem {
  readonly rule: string;
  /** Names the host at most, never an address it resolved to. */
  readonly message: string;
  /**
   * The resolved address refused, where one was: for a message only an admin reads (the start's
   * configuration check), never for one anyone else may (an owner's channel).
   */
  readonly address?: string;
}

export interface Outbound {
  /**
   * Checks a URL when it is configured: its shape, then its host resolved now with every address
   * checked. Null when it may be sent to. Never throws.
   */
  problem(url: string): Promise<OutboundProblem | null>;
  /**
   * Sends one request: the URL checked again, its host resolved once, every address checked and
   * the checked address dialled; a redirect is answered as it is, never followed. Rejects when
   * the URL or an address is refused.
   */
  readonly fetch: typeof fetch;
}
