/**
 * @module The `toolgate` command's exit codes: one class per kind of failure, and the class of every
 * code of the error catalogue (core/errors.ts), in a table a new code cannot compile without. A
 * script branches on the class; the printed `{ error: { code } }` says which refusal it was.
 * scripts/gen-docs.ts renders both tables into docs/cli-reference.md.
 */
import type { ErrorCode } from '../../core/index.js';

/** The exit code of each class; 0 is success. Never renumbered: scripts depend on them. */
export const EXIT_CLASSES = {
  ok: { exit: 0, meaning: 'the command did what it was asked' },
  internal: {
    exit: 1,
    meaning:
      'an unexpected error (a bug): one line and `INTERNAL`; its stack only with TOOLGATE_DEBUG=1',
  },
  usage: {
    exit: 2,
    meaning:
      'the command line or an input is wrong: an unknown command or option, a bad value, a missing, unreadable or invalid file or document',
  },
  refused: {
    exit: 3,
    meaning:
      'understood and refused: no or wrong credentials, a missing role, a conflict with the current state (exists already, already decided, review needed), a policy',
  },
  not_found: { exit: 4, meaning: 'what the command names does not exist' },
  unavailable: {
    exit: 5,
    meaning:
      'something the command needs cannot be used now: the database is unreachable, locked, damaged or newer than this binary; a provider, sandbox or key is missing. Retrying or fixing the host may help',
  },
  verification_failed: {
    exit: 6,
    meaning:
      'a check of integrity failed: `audit verify` found a broken chain, record or checkpoint, `decisions verify` a passkey-signed decision that does not verify, or a stored secret failed its authentication (tampering, or data moved)',
  },
} as const satisfies Record<string, { exit: number; meaning: string }>;

export type ExitClass = keyof typeof EXIT_CLASSES;

/**
 * The class of each catalogue code. A code an agent's call meets (the gate's refusals) is here too,
 * because library and REST callers share the catalogue; the CLI itself runs no tool.
 */
export const EXIT_CLASS_OF_CODE: { readonly [C in ErrorCode]: Exclude<ExitClass, 'ok'> } = {
  INPUT_INVALID: 'usage',
  INPUT_MALFORMED: 'usage',
  UNSUPPORTED_MEDIA_TYPE: 'usage',
  PAYLOAD_TOO_LARGE: 'usage',
  DEFINITION_INVALID: 'usage',
  CONFIG_INVALID: 'usage',
  NOTIFY_CONFIG_INVALID: 'usage',
  MCP_SESSION_REQUIRED: 'usage',
  MCP_HEADER_MISMATCH: 'usage',
  UNAUTHENTICATED: 'refused',
  FORBIDDEN: 'refused',
  INSUFFICIENT_SCOPE: 'refused',
  CONSOLE_FORM_REFUSED: 'refused',
  OIDC_LOGIN_FAILED: 'refused',
  SECOND_FACTOR_LOCKED: 'refused',
  PASSKEY_REFUSED: 'refused',
  PASSKEY_REQUIRED: 'refused',
  APPROVAL_SCOPE_REFUSED: 'refused',
  OPERATOR_EXISTS: 'refused',
  VERSION_EXISTS: 'refused',
  BREAKING_CHANGE: 'refused',
  LIFECYCLE_INVALID: 'refused',
  QUARANTINE_STATE: 'refused',
  REVIEW_REQUIRED: 'refused',
  REVIEW_STATE: 'refused',
  REVIEW_HASH_MISMATCH: 'refused',
  APPROVAL_STATE: 'refused',
  APPROVAL_REQUIRED: 'refused',
  APPROVAL_INVALID: 'refused',
  DESTINATION_SET_EXISTS: 'refused',
  SECRET_EXISTS: 'refused',
  PROVIDER_TOOL_STATE: 'refused',
  PROVIDER_ENTRY_STATE: 'refused',
  TOOL_RETIRED: 'refused',
  GRANT_MISSING: 'refused',
  POLICY_DENIED: 'refused',
  BUDGET_EXCEEDED: 'refused',
  CODE_REFUSED: 'refused',
  CODE_UNCHECKABLE: 'refused',
  DESTINATION_NOT_ALLOWED: 'refused',
  TOXIC_FLOW: 'refused',
  IDEMPOTENCY_CONFLICT: 'refused',
  SESSION_SUSPENDED: 'refused',
  EGRESS_DENIED: 'refused',
  ENTRY_DENIED: 'refused',
  RESULT_BLOCKED: 'refused',
  CALL_CANCELLED: 'refused',
  RUN_EXPIRED: 'refused',
  RUN_REVOKED: 'refused',
  REQUEST_STATE_INVALID: 'refused',
  REQUEST_STATE_EXPIRED: 'refused',
  REQUEST_STATE_MISMATCH: 'refused',
  REQUEST_STATE_REPLAYED: 'refused',
  NOT_FOUND: 'not_found',
  OPERATOR_NOT_FOUND: 'not_found',
  TOOL_NOT_FOUND: 'not_found',
  AGENT_NOT_FOUND: 'not_found',
  USER_NOT_FOUND: 'not_found',
  SESSION_NOT_FOUND: 'not_found',
  TOOL_NOT_REGISTERED: 'not_found',
  HEALTH_OVERRIDE_NOT_FOUND: 'not_found',
  DESTINATION_SET_NOT_FOUND: 'not_found',
  IDEMPOTENCY_KEY_NOT_FOUND: 'not_found',
  SECRET_NOT_FOUND: 'not_found',
  AUDIT_RECORD_NOT_FOUND: 'not_found',
  PROVIDER_NOT_FOUND: 'not_found',
  RESOURCE_NOT_FOUND: 'not_found',
  PROMPT_NOT_FOUND: 'not_found',
  MCP_SESSION_NOT_FOUND: 'not_found',
  RUN_NOT_FOUND: 'not_found',
  STORE_UNAVAILABLE: 'unavailable',
  STORE_TOO_NEW: 'unavailable',
  SHUTTING_DOWN: 'unavailable',
  MASTER_KEY_INVALID: 'unavailable',
  TOOL_UNAVAILABLE: 'unavailable',
  DESTINATION_SET_UNAVAILABLE: 'unavailable',
  CREDENTIAL_UNAVAILABLE: 'unavailable',
  PROVIDER_UNAVAILABLE: 'unavailable',
  SANDBOX_UNAVAILABLE: 'unavailable',
  SANDBOX_TIMEOUT: 'unavailable',
  SANDBOX_LIMIT: 'unavailable',
  EXECUTION_FAILED: 'unavailable',
  OUTPUT_INVALID: 'unavailable',
  RATE_LIMITED: 'unavailable',
  LIMIT_REACHED: 'unavailable',
  OVERLOADED: 'unavailable',
  AUDIT_CHAIN_BROKEN: 'verification_failed',
  SECRET_UNREADABLE: 'verification_failed',
  INTERNAL: 'internal',
};

/** The exit code of a class. */
export function exitCodeOf(cls: ExitClass): number {
  return EXIT_CLASSES[cls].exit;
}

/** The exit code a printed refusal ends the command with. */
export function exitCodeForError(code: ErrorCode): number {
  return exitCodeOf(EXIT_CLASS_OF_CODE[code]);
}
