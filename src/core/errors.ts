/**
 * @module The one error catalogue: stable string codes, each mapped once to an HTTP status and a
 * JSON-RPC code, for both wires (REST and MCP take every code and number from here: §7 of
 * docs/architecture.md). A code without a mapping does not compile; `docs/errors.md` documents
 * every code's `details` (a test checks it, and that no front sends a code or number not here).
 */
import type { CapDetails } from './cap-details.js';
import type { PasskeyRefusedDetails, PasskeyRequiredDetails } from './passkey-refusal.js';
import type { Problem } from './problem.js';

export const ERROR_CODES = {
  INPUT_INVALID: { http: 400, jsonRpc: -32602, summary: 'The request does not match its schema.' },
  INPUT_MALFORMED: {
    http: 400,
    jsonRpc: -32700,
    summary: 'The body is not parseable JSON or YAML.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    http: 415,
    jsonRpc: -32600,
    summary: 'The body has a content type this route does not accept.',
  },
  PAYLOAD_TOO_LARGE: { http: 413, jsonRpc: -32600, summary: 'The request body is over the limit.' },
  UNAUTHENTICATED: { http: 401, jsonRpc: -32001, summary: 'No valid credentials were presented.' },
  FORBIDDEN: { http: 403, jsonRpc: -32003, summary: 'The caller may not perform this operation.' },
  INSUFFICIENT_SCOPE: {
    http: 403,
    jsonRpc: -32005,
    summary: "The OAuth access token's scopes do not cover the request (a step-up challenge).",
  },
  NOT_FOUND: { http: 404, jsonRpc: -32601, summary: 'No such route or resource.' },
  OPERATOR_NOT_FOUND: { http: 404, jsonRpc: -32004, summary: 'No operator account with this id.' },
  OPERATOR_EXISTS: {
    http: 409,
    jsonRpc: -32009,
    summary: 'An operator account with this id already exists.',
  },
  TOOL_NOT_FOUND: { http: 404, jsonRpc: -32004, summary: 'No tool with this id (and version).' },
  AGENT_NOT_FOUND: { http: 404, jsonRpc: -32004, summary: 'No agent with this id.' },
  USER_NOT_FOUND: { http: 404, jsonRpc: -32004, summary: 'No enabled user with this id.' },
  SESSION_NOT_FOUND: {
    http: 404,
    jsonRpc: -32004,
    summary: 'No open session with this id for this agent.',
  },
  DEFINITION_INVALID: {
    http: 422,
    jsonRpc: -32602,
    summary: 'A tool definition is incomplete or inconsistent.',
  },
  CONFIG_INVALID: {
    http: 422,
    jsonRpc: -32602,
    summary: 'A configuration file holds at least one invalid document; nothing was applied.',
  },
  VERSION_EXISTS: {
    http: 409,
    jsonRpc: -32009,
    summary: 'This tool version is already registered with a different definition.',
  },
  BREAKING_CHANGE: {
    http: 409,
    jsonRpc: -32009,
    summary: 'The new version breaks the previous contract without a major version bump.',
  },
  LIFECYCLE_INVALID: {
    http: 409,
    jsonRpc: -32009,
    summary: 'The requested lifecycle transition is not allowed from the current state.',
  },
  QUARANTINE_STATE: {
    http: 409,
    jsonRpc: -32009,
    summary: 'The tool version is not in the quarantine state the operation needs.',
  },
  REVIEW_REQUIRED: {
    http: 409,
    jsonRpc: -32070,
    summary: 'The definition needs an approved security review of its hash before it goes live.',
  },
  REVIEW_STATE: {
    http: 409,
    jsonRpc: -32071,
    summary: 'The definition has no pending security review (already decided, or none needed).',
  },
  REVIEW_HASH_MISMATCH: {
    http: 409,
    jsonRpc: -32072,
    summary: 'The review names a definition hash other than the stored one.',
  },
  APPROVAL_STATE: {
    http: 409,
    jsonRpc: -32009,
    summary: 'The approval is not in the state the operation needs (already decided, expired).',
  },
  TOOL_NOT_REGISTERED: {
    http: 404,
    jsonRpc: -32011,
    summary: 'No such tool in the session (never says whether it exists elsewhere).',
  },
  TOOL_RETIRED: { http: 410, jsonRpc: -32012, summary: 'The tool version is retired.' },
  TOOL_UNAVAILABLE: {
    http: 503,
    jsonRpc: -32032,
    summary: 'The tool is unavailable (its health monitor withdrew it); the call was not run.',
  },
  HEALTH_OVERRIDE_NOT_FOUND: {
    http: 404,
    jsonRpc: -32033,
    summary: 'The tool version has no health override in force.',
  },
  GRANT_MISSING: {
    http: 403,
    jsonRpc: -32013,
    summary: 'The session lacks a capability the tool needs.',
  },
  POLICY_DENIED: {
    http: 403,
    jsonRpc: -32014,
    summary: 'An argument or organisation policy refused the call.',
  },
  RATE_LIMITED: { http: 429, jsonRpc: -32015, summary: 'A rate limit was reached.' },
  BUDGET_EXCEEDED: { http: 429, jsonRpc: -32016, summary: 'A session budget is spent.' },
  CODE_REFUSED: {
    http: 403,
    jsonRpc: -32092,
    summary: 'A code argument does something the static code guard refuses (rule code.*).',
  },
  CODE_UNCHECKABLE: {
    http: 403,
    jsonRpc: -32093,
    summary: 'A code argument could not be checked (syntax, size, timeout, no parser): refused.',
  },
  DESTINATION_NOT_ALLOWED: {
    http: 403,
    jsonRpc: -32023,
    summary:
      "A destination argument (recipient, account, phone, channel) is outside its tool's allow-list.",
  },
  DESTINATION_SET_NOT_FOUND: {
    http: 404,
    jsonRpc: -32024,
    summary: 'No destination set with this name.',
  },
  DESTINATION_SET_EXISTS: {
    http: 409,
    jsonRpc: -32025,
    summary: 'A destination set with this name already exists.',
  },
  DESTINATION_SET_UNAVAILABLE: {
    http: 502,
    jsonRpc: -32026,
    summary: "A destination set's directory tool could not be read; its members are unchanged.",
  },
  TOXIC_FLOW: {
    http: 403,
    jsonRpc: -32017,
    summary: 'Private data was read in this session; unconstrained egress is refused.',
  },
  // Not a refusal: the call waits for a person. REST answers 202 with the pending decision; MCP a
  // tool result with isError and this code, so the agent reports it instead of retrying blindly.
  APPROVAL_REQUIRED: {
    http: 202,
    jsonRpc: -32022,
    summary:
      "The call waits for a person's approval; retry it with the same arguments once approved.",
  },
  APPROVAL_INVALID: {
    http: 403,
    jsonRpc: -32018,
    summary: 'The approval presented does not match this call.',
  },
  IDEMPOTENCY_CONFLICT: {
    http: 409,
    jsonRpc: -32019,
    summary:
      'The idempotency key was used with other arguments, or its first call has not finished (or its outcome is unknown).',
  },
  IDEMPOTENCY_KEY_NOT_FOUND: {
    http: 404,
    jsonRpc: -32097,
    summary:
      "No call of this principal under this idempotency key and tool (never made, expired, or another principal's).",
  },
  OUTPUT_INVALID: {
    http: 502,
    jsonRpc: -32020,
    summary: 'The tool returned a result its schema refuses.',
  },
  EXECUTION_FAILED: { http: 502, jsonRpc: -32021, summary: 'The tool could not be run or failed.' },
  RESULT_BLOCKED: {
    http: 502,
    jsonRpc: -32067,
    summary: 'The tool result held what its result policy blocks; it is not returned.',
  },
  SECRET_NOT_FOUND: {
    http: 404,
    jsonRpc: -32004,
    summary: 'No secret with this name for this tool in this environment.',
  },
  SECRET_EXISTS: {
    http: 409,
    jsonRpc: -32009,
    summary: 'The secret already exists; rotate it to change its value.',
  },
  SECRET_UNREADABLE: {
    http: 500,
    jsonRpc: -32041,
    summary: 'A stored secret failed authentication (tampered or moved); it is not used.',
  },
  MASTER_KEY_INVALID: {
    http: 500,
    jsonRpc: -32042,
    summary: 'The master key is missing, malformed, or not the key the secrets were sealed with.',
  },
  CREDENTIAL_UNAVAILABLE: {
    http: 502,
    jsonRpc: -32043,
    summary: "The tool's credential could not be provided; the tool was not run.",
  },
  SESSION_SUSPENDED: {
    http: 403,
    jsonRpc: -32031,
    summary: 'A detector suspended this session; its calls are refused.',
  },
  STORE_UNAVAILABLE: { http: 503, jsonRpc: -32010, summary: 'The database cannot be reached.' },
  STORE_TOO_NEW: { http: 503, jsonRpc: -32027, summary: 'A newer toolgate upgraded the database.' },
  EGRESS_DENIED: {
    http: 403,
    jsonRpc: -32030,
    summary: 'The egress proxy or http runtime refused a connection or request of the tool.',
  },
  // Sandbox: the tool's isolation cannot be provided, or the run hit a limit.
  SANDBOX_UNAVAILABLE: {
    http: 503,
    jsonRpc: -32040,
    summary: 'The isolation the tool requires is not available on this host; it was not run.',
  },
  SANDBOX_TIMEOUT: {
    http: 504,
    jsonRpc: -32041,
    summary: 'The tool ran past its wall-clock limit and was killed.',
  },
  SANDBOX_LIMIT: {
    http: 502,
    jsonRpc: -32042,
    summary: 'The tool exceeded a sandbox limit (CPU, memory, output, scratch) and was stopped.',
  },
  INTERNAL: { http: 500, jsonRpc: -32603, summary: 'An unexpected error; details are logged.' },
  AUDIT_RECORD_NOT_FOUND: {
    http: 404,
    jsonRpc: -32004,
    summary: 'No audit record with this seq or hash.',
  },
  AUDIT_CHAIN_BROKEN: {
    http: 500,
    jsonRpc: -32030,
    summary:
      'An audit record does not match its hash or link; nothing is signed or proven over it.',
  },
  PROVIDER_NOT_FOUND: {
    http: 404,
    jsonRpc: -32050,
    summary: 'No upstream provider with this name.',
  },
  PROVIDER_UNAVAILABLE: {
    http: 502,
    jsonRpc: -32051,
    summary: 'The upstream MCP provider could not be started, reached or listed.',
  },
  PROVIDER_TOOL_STATE: {
    http: 409,
    jsonRpc: -32052,
    summary: 'The provider tool is not in a state this operation accepts (absent, removed).',
  },
  // Governed upstream resources, resource templates and prompts (docs/architecture.md §6).
  RESOURCE_NOT_FOUND: {
    http: 404,
    jsonRpc: -32084,
    summary: 'No resource with this URI is offered to the caller (never says whether one exists).',
  },
  PROMPT_NOT_FOUND: {
    http: 404,
    jsonRpc: -32085,
    summary: 'No prompt with this name is offered to the caller (never says whether one exists).',
  },
  ENTRY_DENIED: {
    http: 403,
    jsonRpc: -32086,
    summary: 'The gate refused a resources/read or prompts/get; details carry its decision.',
  },
  PROVIDER_ENTRY_STATE: {
    http: 409,
    jsonRpc: -32087,
    summary: 'The provider resource or prompt is not in a state this operation accepts.',
  },
  // Second factors are rate-limited per approver, in the store every replica shares.
  SECOND_FACTOR_LOCKED: {
    http: 429,
    jsonRpc: -32060,
    summary: "The approver's second factor is in backoff or locked after failed codes.",
  },
  // 499 as in "client closed request": the caller itself withdrew the call.
  CALL_CANCELLED: {
    http: 499,
    jsonRpc: -32800,
    summary: 'The caller cancelled the call before it finished.',
  },
  // Caps and admission: one agent cannot use up what everyone shares.
  LIMIT_REACHED: {
    http: 429,
    jsonRpc: -32062,
    summary: "The caller's own share (open sessions, requests in flight) is used up; retry later.",
  },
  OVERLOADED: {
    http: 503,
    jsonRpc: -32063,
    summary: 'The gateway is at capacity; it answers at once instead of queueing. Retry later.',
  },
  SHUTTING_DOWN: { http: 503, jsonRpc: -32068, summary: 'The gateway is stopping; retry later.' },
  // MCP transport faults at /mcp, before any gate session: JSON-RPC's own "Invalid Request" code.
  MCP_SESSION_REQUIRED: {
    http: 400,
    jsonRpc: -32600,
    summary: 'A request without an MCP session id that is not initialize.',
  },
  MCP_SESSION_NOT_FOUND: {
    http: 404,
    jsonRpc: -32600,
    summary: "No MCP session with this id for this caller (ended, evicted, or another caller's).",
  },
  // Single sign-on: the reason is logged; a browser is shown one generic message.
  OIDC_LOGIN_FAILED: {
    http: 401,
    jsonRpc: -32075,
    summary: 'A single sign-on did not complete: a check of the provider or its ID token failed.',
  },
  NOTIFY_CONFIG_INVALID: {
    http: 422,
    jsonRpc: -32073,
    summary: 'A notification channel is misconfigured (URL not loopback or https, bad limits).',
  },
  // 2026-07-28 requests: the headers mirror the body; the spec names -32020 (HeaderMismatch).
  MCP_HEADER_MISMATCH: {
    http: 400,
    jsonRpc: -32020,
    summary:
      'An MCP header (Mcp-Method, Mcp-Name, Mcp-Param-*) is missing or disagrees with the body.',
  },
  // Runs: the handle a 2026-07-28 client carries in `_meta["io.toolgate/run"]`.
  RUN_NOT_FOUND: {
    http: 404,
    jsonRpc: -32064,
    summary: "No run with this handle for this caller (unknown, or another principal's).",
  },
  RUN_EXPIRED: { http: 410, jsonRpc: -32065, summary: 'The run handle has expired.' },
  RUN_REVOKED: { http: 410, jsonRpc: -32066, summary: 'The run handle was revoked.' },
  // 2026-07-28 approvals as multi round-trip requests: the sealed `requestState` a retry echoes.
  REQUEST_STATE_INVALID: {
    http: 400,
    jsonRpc: -32080,
    summary: 'The requestState is not one this gateway sealed (malformed, tampered, other key).',
  },
  REQUEST_STATE_EXPIRED: {
    http: 410,
    jsonRpc: -32081,
    summary: 'The requestState (or the approval it names) has expired.',
  },
  REQUEST_STATE_MISMATCH: {
    http: 403,
    jsonRpc: -32082,
    summary: 'The requestState was sealed for another principal, run, tool or arguments.',
  },
  REQUEST_STATE_REPLAYED: {
    http: 409,
    jsonRpc: -32083,
    summary: 'The approval this requestState names was already used (or withdrawn).',
  },
  PASSKEY_REFUSED: { http: 403, jsonRpc: -32076, summary: 'A passkey assertion was refused.' },
  PASSKEY_REQUIRED: { http: 403, jsonRpc: -32077, summary: 'This decision needs a passkey.' },
  APPROVAL_SCOPE_REFUSED: {
    http: 403,
    jsonRpc: -32078,
    summary: 'This approval cannot be given a scope (its action class, out of band, or escalated).',
  },
  CONSOLE_FORM_REFUSED: {
    http: 403,
    jsonRpc: -32074,
    summary: 'A console form was not sent from the console itself (origin or CSRF token).',
  },
} as const satisfies Record<string, { http: number; jsonRpc: number; summary: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Documented `details` shapes, one per code; `docs/errors.md` mirrors this. */
export interface ErrorDetails {
  INPUT_INVALID: { problems: Problem[] };
  INPUT_MALFORMED: { reason: string };
  UNSUPPORTED_MEDIA_TYPE: { contentType: string; accepted: string[] };
  PAYLOAD_TOO_LARGE: { limitBytes: number };
  UNAUTHENTICATED: Record<string, never>;
  /** `roles`: the operator roles that would be allowed (admin routes). */
  /** `rule`: the reviewer rule a security review was refused by (`review.<reason>`). */
  FORBIDDEN: { roles?: string[]; rule?: string };
  OPERATOR_NOT_FOUND: { operatorId: string };
  OPERATOR_EXISTS: { operatorId: string };
  INSUFFICIENT_SCOPE: { scope: string };
  CONSOLE_FORM_REFUSED: { reason: 'cross_origin' | 'csrf' };
  PASSKEY_REFUSED: PasskeyRefusedDetails;
  PASSKEY_REQUIRED: PasskeyRequiredDetails;
  /** `reason`: `action_class`, `out_of_band`, `escalated`, `not_bindable`. */
  APPROVAL_SCOPE_REFUSED: { approvalId: string; reason: string; action_class: string };
  NOT_FOUND: { method?: string; url?: string };
  TOOL_NOT_FOUND: { toolId: string; version?: string };
  AGENT_NOT_FOUND: { agentId: string };
  USER_NOT_FOUND: { userId: string };
  SESSION_NOT_FOUND: { sessionId: string };
  DEFINITION_INVALID: { toolId?: string; version?: string; problems: Problem[] };
  CONFIG_INVALID: { problems: (Problem & { document: number; kind?: string })[] };
  VERSION_EXISTS: { toolId: string; version: string; existingHash: string; newHash: string };
  BREAKING_CHANGE: {
    toolId: string;
    version: string;
    previousVersion: string;
    problems: Problem[];
  };
  LIFECYCLE_INVALID: { toolId: string; version: string; from: string; to: string };
  QUARANTINE_STATE: { toolId: string; version: string; quarantined: boolean };
  REVIEW_REQUIRED: {
    toolId: string;
    version: string;
    definitionHash: string;
    review: 'pending' | 'rejected';
    reasons: string[];
  };
  REVIEW_STATE: { toolId: string; version: string; status: 'approved' | 'rejected' | 'none' };
  REVIEW_HASH_MISMATCH: {
    toolId: string;
    version: string;
    statedHash: string;
    definitionHash: string;
  };
  APPROVAL_STATE: { approvalId: string };
  TOOL_NOT_REGISTERED: CallDenial;
  TOOL_RETIRED: CallDenial & {
    /** What to call instead (`name@<major>`) and its version; null when the caller may use none. */
    successor: { tool: string; version: string } | null;
  };
  TOOL_UNAVAILABLE: CallDenial;
  HEALTH_OVERRIDE_NOT_FOUND: { toolId: string; version: string };
  GRANT_MISSING: CallDenial;
  POLICY_DENIED: CallDenial;
  RATE_LIMITED: CallDenial;
  BUDGET_EXCEEDED: CallDenial;
  CODE_REFUSED: CallDenial;
  CODE_UNCHECKABLE: CallDenial;
  TOXIC_FLOW: CallDenial;
  /** `argument`: the concrete JSON pointer of the refused value (`/cc/1`); never the allow-list. */
  DESTINATION_NOT_ALLOWED: CallDenial & { argument: string };
  DESTINATION_SET_NOT_FOUND: { set: string };
  DESTINATION_SET_EXISTS: { set: string };
  DESTINATION_SET_UNAVAILABLE: { set: string; reason: string };
  APPROVAL_REQUIRED: PendingApproval;
  APPROVAL_INVALID: CallDenial;
  IDEMPOTENCY_CONFLICT: CallDenial;
  IDEMPOTENCY_KEY_NOT_FOUND: { tool: string; idempotencyKey: string };
  OUTPUT_INVALID: CallDenial;
  EXECUTION_FAILED: CallDenial;
  RESULT_BLOCKED: CallDenial;
  SECRET_NOT_FOUND: SecretRef;
  SECRET_EXISTS: SecretRef & { version: number };
  SECRET_UNREADABLE: SecretRef & { version: number };
  MASTER_KEY_INVALID: { reason: string; keyId?: string; expectedKeyId?: string };
  CREDENTIAL_UNAVAILABLE: { toolId: string; secret: string; reason: string };
  SESSION_SUSPENDED: CallDenial;
  STORE_UNAVAILABLE: Record<string, never>;
  STORE_TOO_NEW: { unknown: string[]; newestKnown: string };
  EGRESS_DENIED: CallDenial;
  SANDBOX_UNAVAILABLE: CallDenial;
  SANDBOX_TIMEOUT: CallDenial;
  SANDBOX_LIMIT: CallDenial;
  INTERNAL: Record<string, never>;
  AUDIT_RECORD_NOT_FOUND: { seq?: number; hash?: string };
  AUDIT_CHAIN_BROKEN: { seq: number };
  PROVIDER_NOT_FOUND: { provider: string };
  PROVIDER_UNAVAILABLE: { provider: string; reason: string };
  PROVIDER_TOOL_STATE: { provider: string; tool: string; state: string | null };
  RESOURCE_NOT_FOUND: { uri: string };
  PROMPT_NOT_FOUND: { name: string };
  /** The gate's decision: its code, rule and call id (`approval_id` when one waits). */
  ENTRY_DENIED: {
    code: string;
    rule: string;
    call_id: string;
    approval_id?: string;
    details?: unknown;
  };
  PROVIDER_ENTRY_STATE: { provider: string; kind: string; key: string; state: string | null };
  SECOND_FACTOR_LOCKED: {
    approver: string;
    reason: 'backoff' | 'locked';
    retryAfterSeconds: number;
    failures: number;
  };
  CALL_CANCELLED: CallDenial;
  LIMIT_REACHED: CapDetails;
  OVERLOADED: CapDetails;
  SHUTTING_DOWN: { retryAfterSeconds: number };
  MCP_SESSION_REQUIRED: Record<string, never>;
  MCP_SESSION_NOT_FOUND: Record<string, never>;
  OIDC_LOGIN_FAILED: { reason: string };
  NOTIFY_CONFIG_INVALID: { problems: Problem[] };
  MCP_HEADER_MISMATCH: { header: string; reason: string };
  RUN_NOT_FOUND: Record<string, never>;
  RUN_EXPIRED: { run: string; expiredAt: string };
  RUN_REVOKED: { run: string };
  REQUEST_STATE_INVALID: RequestStateRefusal;
  REQUEST_STATE_EXPIRED: RequestStateRefusal;
  REQUEST_STATE_MISMATCH: RequestStateRefusal;
  REQUEST_STATE_REPLAYED: RequestStateRefusal;
}

/**
 * Why a retried call's `requestState` was refused: `reason` names the check that failed; a
 * refusal by the gate (arguments changed, approval used) also names its rule and audited call.
 */
export interface RequestStateRefusal {
  reason: string;
  rule?: string;
  call_id?: string;
}

/** A call waiting for approval: which approval to decide, and the literal call it covers. */
export interface PendingApproval {
  call_id: string;
  approval_id: string;
  rendered: unknown;
}

/** Names a secret (never its value). */
export interface SecretRef {
  toolId: string;
  name: string;
  environment: string;
}

/** A gate denial on the wire: the rule that fired and the audited call id. */
export interface CallDenial {
  rule: string;
  call_id: string;
  problems?: Problem[];
}

/** The only error type that crosses a front; anything else is reported as INTERNAL. */
export class ToolgateError<C extends ErrorCode = ErrorCode> extends Error {
  override readonly name = 'ToolgateError';
  readonly code: C;
  readonly details: ErrorDetails[C];

  constructor(code: C, message: string, details: ErrorDetails[C]) {
    super(message);
    this.code = code;
    this.details = details;
  }

  get httpStatus(): number {
    return ERROR_CODES[this.code].http;
  }
  get jsonRpcCode(): number {
    return ERROR_CODES[this.code].jsonRpc;
  }

  /** The wire shape: `{ code, message, details }`; never includes a stack or a cause. */
  toBody(): ErrorBody {
    return { code: this.code, message: this.message, details: this.details };
  }
}

export interface ErrorBody {
  readonly code: ErrorCode;
  readonly message: string;
  readonly details: unknown;
}

export function isToolgateError(value: unknown): value is ToolgateError {
  return value instanceof ToolgateError;
}

export function internalErrorBody(): ErrorBody {
  return { code: 'INTERNAL', message: ERROR_CODES.INTERNAL.summary, details: {} };
}
