/**
 * @module What the client SDK throws. It never runs a tool itself, so when the gateway cannot be
 * reached a call fails closed with `GatewayUnavailableError` (after the bounded retries), and a
 * request the gateway refused outside a call decision is `GatewayRequestError`.
 */

/** How the last attempt failed: a transport error (refused, reset, timeout) or a status. */
export type UnavailableCause =
  | { readonly kind: 'network'; readonly code: string; readonly message: string }
  | { readonly kind: 'status'; readonly status: number; readonly code: string | null };

/**
 * The gateway could not be reached (or kept answering 502/503/504/429) for every attempt: nothing
 * was run by the SDK, and whether the gateway ran the call is unknown only when `mayHaveRun`.
 * Retrying later with `idempotencyKey` is safe: the gateway runs a call under one key once.
 */
export class GatewayUnavailableError extends Error {
  override readonly name = 'GatewayUnavailableError';
  readonly code = 'GATEWAY_UNAVAILABLE' as const;
  constructor(
    message: string,
    readonly attempts: number,
    readonly lastCause: UnavailableCause,
    /** The key the attempts carried (REST calls), to retry the same call later; null otherwise. */
    readonly idempotencyKey: string | null,
    /** False when no attempt can have reached the gateway (every connection was refused). */
    readonly mayHaveRun: boolean,
  ) {
    super(message);
  }
}

/** The gateway answered a request (not a call decision) with a refusal: `{ code, message, details }`. */
export class GatewayRequestError extends Error {
  override readonly name = 'GatewayRequestError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Readonly<Record<string, unknown>>,
  ) {
    super(message);
  }
}

/**
 * The gateway started the call under this idempotency key and its outcome is not known here: it
 * was still running when the wait ended (`state: 'running'`), or the gateway recorded no outcome
 * for it and it may have run (`state: 'unknown'`). Never send it again under a new key — that
 * would run it a second time; ask later with `ToolgateClient.outcome(tool, idempotencyKey)`.
 */
export class CallOutcomeUnknownError extends Error {
  override readonly name = 'CallOutcomeUnknownError';
  readonly code = 'CALL_OUTCOME_UNKNOWN' as const;
  constructor(
    readonly tool: string,
    readonly idempotencyKey: string,
    readonly state: 'running' | 'unknown',
    readonly callId: string | null,
  ) {
    super(
      state === 'running'
        ? `the call under idempotency key ${idempotencyKey} is still running on the gateway; ask for its outcome later with the same key (do not send it under a new key: it would run twice)`
        : `the call under idempotency key ${idempotencyKey} was started and the gateway recorded no outcome: it may have run; do not send it under a new key`,
    );
  }
}

/** Waiting for an approval outlasted `timeoutMs`; the approval is still pending on the gateway. */
export class ApprovalWaitTimeoutError extends Error {
  override readonly name = 'ApprovalWaitTimeoutError';
  constructor(readonly approvalId: string) {
    super(`approval ${approvalId} is still pending`);
  }
}

/** The MCP transport was chosen but its optional peer `@modelcontextprotocol/client` is not installed. */
export class McpClientMissingError extends Error {
  override readonly name = 'McpClientMissingError';
  readonly code = 'MCP_CLIENT_MISSING' as const;
  constructor(cause: unknown) {
    super(
      "the MCP transport needs @modelcontextprotocol/client 2.4.0 (an optional peer dependency of toolgate): npm install --save-exact @modelcontextprotocol/client@2.4.0, or use transport: 'rest'",
      { cause },
    );
  }
}

export function isGatewayUnavailable(err: unknown): err is GatewayUnavailableError {
  return err instanceof GatewayUnavailableError;
}
