/** @module The Kysely schema: one set of tables for SQLite and PostgreSQL. */
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';
import type { ApprovalScopeTable } from './approval-scope-table.js';
import type { OwnerNoticeSendTable, ToolProbeOutcomeTable } from './fleet-tables.js';
import type {
  OperatorLoginAttemptTable,
  OperatorTable,
  OperatorTokenTable,
} from './operator-tables.js';
import type {
  DecisionAssertionTable,
  OperatorPasskeyTable,
  PasskeyChallengeTable,
} from './passkey-tables.js';
import type { AuditStagedTable, AuditStreamHeadTable } from './staging-tables.js';

/** Set once at insert, never updated (also refused by triggers). */
type InsertOnly<T> = ColumnType<T, T, never>;

export interface ToolVersionTable {
  tool_id: string;
  version: string;
  name: string;
  description: string;
  owner: string;
  action_class: string;
  access_tier: string;
  data_access: string;
  egress_mode: string;
  provenance: string;
  /** JSON array of strings. */
  tags: string;
  /** The normalized definition as canonical JSON. */
  definition: string;
  definition_hash: string;
  lifecycle: string;
  /** 0 or 1: SQLite has no boolean and the same queries must run on both. */
  quarantined: number;
  /** JSON array of scan findings; `[]` when clean. */
  quarantine_findings: string;
  created_at: string;
  created_by: string;
  updated_at: string;
  deprecated_at: string | null;
  retire_at: string | null;
  retired_at: string | null;
  /** Catalog revision of the write that last changed this row (0 before migration 0002). */
  revision: number;
}

export interface AgentTable {
  id: string;
  display_name: string;
  description: string;
  owner: string;
  enabled: number;
  spec_hash: string;
  created_at: string;
  updated_at: string;
  /** Highest access tier this agent may use: public | restricted | privileged. */
  tier: ColumnType<string, string | undefined, string>;
  /** JSON per-session budgets: { external_sends?, egress_bytes?, spend_cents? }. */
  budgets: ColumnType<string, string | undefined, string>;
  /** JSON ceilings over rolling windows: { flow_window_seconds?, windows? } (limits/ceilings.ts). */
  ceilings: ColumnType<string, string | undefined, string>;
}

/** One time bucket of one rolling-window counter (limits/ceilings.ts). */
export interface CeilingCounterTable {
  key: string;
  bucket: number;
  amount: number;
  expires_at: string;
}

/** API keys: `tgk_<key_id>_<secret>`; only the SHA-256 of the secret is stored. */
export interface AgentKeyTable {
  key_id: string;
  agent_id: string;
  secret_hash: string;
  created_at: string;
  created_by: string;
  revoked_at: string | null;
}

export interface UserTable {
  id: string;
  display_name: string;
  /** JSON array of capabilities the user may exercise through an agent. */
  permissions: string;
  enabled: number;
  spec_hash: string;
  created_at: string;
  updated_at: string;
}

export interface SessionTable {
  id: string;
  agent_id: string;
  user_id: string | null;
  run_id: string;
  created_at: string;
  expires_at: string;
  status: string;
  /** JSON: the permitted set at open, [{ id, version }]. */
  tool_set: string;
  /** JSON: tools withheld and why, for admins. */
  withheld: string;
  private_data_read: number;
  external_sends: number;
  egress_bytes: number;
  spend_cents: number;
  /** JSON array: the user's permissions as a verified JWT stated them; null → from users. */
  user_permissions: ColumnType<string | null, string | null | undefined, string | null>;
  /** 1 once a detector suspended the session: its calls are refused (migration 0009). */
  suspended: ColumnType<number, number | undefined, number>;
  /**
   * The credential that opened the session (`key:<key id>`, `jwt:["<iss>","<sub>"]`); null for
   * in-process library sessions. Every later request must present the same (migration 0012).
   */
  credential: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON array of tool ids whose untrusted results entered the session; null: none (0025). */
  untrusted_sources: ColumnType<string | null, string | null | undefined, string | null>;
  /** 1 once a result in the session held instruction-like text (0025). */
  injection_seen: ColumnType<number, number | undefined, number>;
  /** When a request last used the session (to a minute; null: not since it opened) (0039). */
  last_used_at: ColumnType<string | null, string | null | undefined, string | null>;
}

/**
 * A result the scan flagged for instruction-like text (migration 0046): its call, tool, time,
 * rules (JSON array) and a bounded excerpt of the flagged string, shown to reviewers as text.
 */
export interface InjectionTextTable {
  call_id: string;
  tool_id: string;
  at: string;
  rules: string;
  excerpt: string | null;
}

/**
 * A destination-like literal (e-mail, URL, host, IBAN, account, phone, handle, channel) first seen
 * in an untrusted result of a run (migration 0026): only the SHA-256 of `kind:normalised value`,
 * never the value, and where it came from. One row per run and hash; the first sighting wins.
 */
export interface DestinationLiteralTable {
  run_id: string;
  hash: string;
  kind: string;
  tool_id: string;
  call_id: string;
  first_seen_at: string;
}

/**
 * One approver's second-factor attempts, shared by every replica (migration 0012): consecutive
 * failures, when the next attempt may be made (backoff), and until when the approver is locked.
 * Times are epoch milliseconds so the conditional update that takes an attempt compares numbers.
 */
export interface TotpAttemptTable {
  approver_id: string;
  failures: number;
  next_attempt_ms: number;
  locked_until_ms: number;
  updated_at: string;
}

/**
 * An operator's enrolled TOTP secret, sealed with the master key (migration 0016): never a
 * plaintext. `last_step` is the newest step accepted for the operator (one code, one use).
 */
export interface OperatorSecondFactorTable {
  operator_id: string;
  version: number;
  key_id: string;
  nonce: string;
  ciphertext: string;
  tag: string;
  last_step: ColumnType<number | null, number | null | undefined, number | null>;
  enrolled_at: string;
  enrolled_by: string;
}

/** A console session: the hash of the browser's cookie, never the cookie itself. */
export interface ConsoleSessionTable {
  id_hash: string;
  /** The authenticated operator, as JSON (id, name, roles, teams, how they authenticated). */
  operator: string;
  operator_id: string;
  created_at: string;
  last_seen_at: string;
  idle_ms: number;
  /** The absolute end of the session, whatever its activity. */
  expires_at: string;
}

/** A single sign-on login between redirect and callback; taken once. */
export interface ConsoleLoginTable {
  id_hash: string;
  pending: string;
  expires_at: string;
}

export interface RateCounterTable {
  key: string;
  count: number;
  expires_at: string;
}

export interface ApprovalTable {
  id: string;
  session_id: string;
  agent_id: string;
  user_id: string | null;
  tool_id: string;
  tool_version: string;
  action_class: string;
  args_hash: string;
  /** JSON: what the reviewer sees (tool, literal arguments, destination, conditions). */
  rendered: string;
  status: string;
  second_factor: number;
  out_of_band: number;
  created_at: string;
  expires_at: string;
  decided_at: string | null;
  decided_by: string | null;
  reason: string | null;
  token: string | null;
  token_id: string | null;
  consumed_at: string | null;
  totp_step: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface AuditTable {
  seq: Generated<number>;
  at: InsertOnly<string>;
  kind: InsertOnly<string>;
  call_id: InsertOnly<string | null>;
  trace_id: InsertOnly<string | null>;
  session_id: InsertOnly<string | null>;
  run_id: InsertOnly<string | null>;
  agent_id: InsertOnly<string | null>;
  user_id: InsertOnly<string | null>;
  tool_id: InsertOnly<string | null>;
  tool_version: InsertOnly<string | null>;
  args_hash: InsertOnly<string | null>;
  /** JSON copy of the arguments with secret-looking values masked. */
  args_redacted: InsertOnly<string | null>;
  decision: InsertOnly<string>;
  code: InsertOnly<string | null>;
  rule: InsertOnly<string | null>;
  message: InsertOnly<string | null>;
  approval_id: InsertOnly<string | null>;
  approver: InsertOnly<string | null>;
  egress_host: InsertOnly<string | null>;
  bytes_out: InsertOnly<number | null>;
  duration_ms: InsertOnly<number | null>;
  outcome: InsertOnly<string | null>;
  model: InsertOnly<string | null>;
  /** JSON: anything else of the record (warnings, matched conditions, result hash). */
  details: InsertOnly<string>;
  /** The chain (migration 0008): hash of record seq-1, and this record's RFC 9162 leaf hash. */
  prev_hash: InsertOnly<string>;
  hash: InsertOnly<string>;
}

/** Raw arguments, kept apart from the audit log: shown to the auditor role only (the console). */
/**
 * The classified store: a call's raw arguments, apart from the chained log (which keeps keyed
 * hashes only). Rows are removed by the retention sweep and by erasure; agent, user and tool
 * (migration 0034; null in rows written before it) let an erasure find a user's calls.
 */
export interface CallArgumentsTable {
  call_id: string;
  at: string;
  agent_id: ColumnType<string | null, string | null | undefined, never>;
  user_id: ColumnType<string | null, string | null | undefined, never>;
  tool_id: ColumnType<string | null, string | null | undefined, never>;
  args: string;
}

export interface IdempotencyTable {
  key: string;
  args_hash: string;
  call_id: string;
  /** JSON of the first result; null while that call is still running, or when it failed. */
  result: string | null;
  /** JSON of the first result's trust label, when it had one (migration 0036). */
  trust: string | null;
  /** JSON `{ code, rule, message }` of a call that ran and failed (migration 0036). */
  failure: string | null;
  created_at: string;
  /** When the claimed call must have ended (claim + wall time + grace); null on older rows. */
  run_by: string | null;
}

export interface GrantTable {
  agent_id: string;
  capability: string;
  created_at: string;
  created_by: string;
}

export interface EventTable {
  seq: Generated<number>;
  at: InsertOnly<string>;
  actor: InsertOnly<string>;
  via: InsertOnly<string>;
  action: InsertOnly<string>;
  subject: InsertOnly<string>;
  /** JSON object. */
  details: InsertOnly<string>;
}

export interface MetaTable {
  key: string;
  value: string;
}

/**
 * Live destination sets (docs/architecture.md §5): named allow-lists a tool's `destinations`
 * rule names; members an admin manages, or a registered directory tool supplies.
 */
export interface DestinationSetTable {
  name: string;
  kind: string;
  /** `admin` or `directory`. */
  source: string;
  /** JSON of the directory source (tool, version, members pointer, intervals); null for admin sets. */
  directory: string | null;
  description: string;
  created_at: string;
  created_by: string;
  updated_at: string;
  /** When the directory tool last answered; null for admin sets and before the first refresh. */
  refreshed_at: string | null;
}

/** One member of a destination set, normalised for its kind. */
export interface DestinationSetMemberTable {
  set_name: string;
  value: string;
  added_at: string;
  added_by: string;
}

/** Organisation policies (Cedar), one policy set per configuration document. */
export interface PolicyTable {
  id: string;
  text: string;
  spec_hash: string;
  created_at: string;
  updated_at: string;
  updated_by: string;
}

/** Administrative changes that need approvers: privileged grants, irreversible tools. */
export interface ChangeRequestTable {
  id: string;
  /** `grant` (agent_id + capability) or `tool` (tool_id + tool_version to activate). */
  kind: string;
  agent_id: string | null;
  capability: string | null;
  tool_id: string | null;
  tool_version: string | null;
  required: number;
  status: string;
  reason: string;
  requested_by: string;
  created_at: string;
  decided_at: string | null;
}

export interface ChangeApprovalTable {
  change_id: string;
  approver_id: string;
  /** Null for an approval made with a passkey (its assertion is in `decision_assertions`). */
  totp_step: number | null;
  at: string;
}

/** Encrypted secrets, current version only (src/domain/credentials/); never holds a plaintext value. */
/** Security reviews of tool definitions (C1): pending from registration, decided once. */
export interface SecurityReviewTable {
  id: string;
  tool_id: string;
  version: string;
  /** The hash of the definition this row reviews; a review covers exactly this one. */
  definition_hash: string;
  /** JSON array of the reasons the definition needs a review (security-review-policy.ts). */
  reasons: string;
  /** 1 when the registration asked to go live: an approval then activates it. */
  go_live: number;
  /** `pending`, `approved` or `rejected`. */
  status: string;
  registered_by: string;
  registered_at: string;
  /** Actor id of the approver who decided (`operator:<id>`), never a stated name. */
  reviewer: string | null;
  reviewed_at: string | null;
  notes: string | null;
}

export interface SecretTable {
  tool_id: string;
  name: string;
  environment: string;
  version: number;
  /** Hash prefix of the master key that sealed this row. */
  key_id: string;
  /** Base64: 96-bit GCM nonce, ciphertext, 128-bit tag. */
  nonce: string;
  ciphertext: string;
  tag: string;
  created_at: string;
  created_by: string;
  rotated_at: string | null;
  rotated_by: string | null;
}

/** Signed tree heads of the audit log (C2SP tlog-checkpoint signed notes); append-only. */
export interface AuditCheckpointTable {
  id: Generated<number>;
  tree_size: InsertOnly<number>;
  /** Lowercase hex of the root hash the note signs. */
  root_hash: InsertOnly<string>;
  note: InsertOnly<string>;
  at: InsertOnly<string>;
  /** JSON of the Merkle frontier at tree_size, so a new process resumes checkpointing from here. */
  frontier: ColumnType<string | null, string | null | undefined, never>;
}

export interface Database {
  change_requests: ChangeRequestTable;
  change_approvals: ChangeApprovalTable;
  policies: PolicyTable;
  destination_sets: DestinationSetTable;
  destination_set_members: DestinationSetMemberTable;
  tool_versions: ToolVersionTable;
  agents: AgentTable;
  agent_keys: AgentKeyTable;
  users: UserTable;
  sessions: SessionTable;
  destination_literals: DestinationLiteralTable;
  injection_texts: InjectionTextTable;
  rate_counters: RateCounterTable;
  ceiling_counters: CeilingCounterTable;
  approvals: ApprovalTable;
  approval_scopes: ApprovalScopeTable;
  audit_log: AuditTable;
  audit_staged: AuditStagedTable;
  audit_stream_heads: AuditStreamHeadTable;
  call_arguments: CallArgumentsTable;
  idempotency: IdempotencyTable;
  grants: GrantTable;
  events: EventTable;
  meta: MetaTable;
  secrets: SecretTable;
  audit_checkpoints: AuditCheckpointTable;
  providers: ProviderTable;
  provider_tools: ProviderToolTable;
  provider_entries: ProviderEntryTable;
  totp_attempts: TotpAttemptTable;
  operators: OperatorTable;
  operator_tokens: OperatorTokenTable;
  operator_login_attempts: OperatorLoginAttemptTable;
  security_reviews: SecurityReviewTable;
  operator_second_factors: OperatorSecondFactorTable;
  operator_passkeys: OperatorPasskeyTable;
  passkey_challenges: PasskeyChallengeTable;
  decision_assertions: DecisionAssertionTable;
  console_sessions: ConsoleSessionTable;
  console_logins: ConsoleLoginTable;
  owner_channels: OwnerChannelTable;
  owner_notice_marks: OwnerNoticeMarkTable;
  tool_health_overrides: ToolHealthOverrideTable;
  applied_objects: AppliedObjectTable;
  tool_probe_outcomes: ToolProbeOutcomeTable;
  owner_notice_sends: OwnerNoticeSendTable;
}

/** One object a named configuration set declared when it was last applied (apply --prune). */
export interface AppliedObjectTable {
  set_name: string;
  /** The document kind: Agent, User, Tool, Policy, Grant, Provider. */
  kind: string;
  /** The object's key within its kind: an id, `tool@version`, or `agent capability` for a grant. */
  subject: string;
  applied_at: string;
  applied_by: string;
}

/** An admin's override of one tool version's health state, in force until `expires_at`. */
export interface ToolHealthOverrideTable {
  tool_id: string;
  version: string;
  state: string;
  reason: string;
  set_by: string;
  set_at: string;
  expires_at: string;
}

export type ToolVersionRow = Selectable<ToolVersionTable>;
export type NewToolVersionRow = Insertable<ToolVersionTable>;
export type AgentRow = Selectable<AgentTable>;
export type GrantRow = Selectable<GrantTable>;
export type EventRow = Selectable<EventTable>;
export type UserRow = Selectable<UserTable>;
export type ChangeRequestRow = Selectable<ChangeRequestTable>;
export type SecurityReviewRow = Selectable<SecurityReviewTable>;
export type SessionRow = Selectable<SessionTable>;
export type ApprovalRow = Selectable<ApprovalTable>;
export type AuditRow = Selectable<AuditTable>;
export type NewAuditRow = Insertable<AuditTable>;
export type SecretRow = Selectable<SecretTable>;
export type AuditCheckpointRow = Selectable<AuditCheckpointTable>;

/** An upstream MCP provider: its checked spec as canonical JSON. */
export interface ProviderTable {
  name: string;
  spec: string;
  spec_hash: string;
  created_at: string;
  created_by: string;
  updated_at: string;
  refreshed_at: string | null;
}

/**
 * One tool of a provider's listing: the pin (hash of name, description and schemas), the listing
 * it was taken from, and its state (`unclassified`, `classified`, `quarantined`, `removed`).
 */
export interface ProviderToolTable {
  provider: string;
  name: string;
  pin_hash: string;
  listing: string;
  state: string;
  reason: string | null;
  findings: string;
  classification: string | null;
  tool_id: string;
  tool_version: string | null;
  updated_at: string;
}

export type ProviderRow = Selectable<ProviderTable>;
export type ProviderToolRow = Selectable<ProviderToolTable>;

/** An upstream resource, resource template or prompt: pinned and classified as a tool is. */
export interface ProviderEntryTable {
  provider: string;
  /** `resource`, `resource_template` or `prompt`. */
  kind: string;
  /** The upstream's key: a resource's URI, a template's URI template, a prompt's name. */
  key: string;
  pin_hash: string;
  listing: string;
  state: string;
  reason: string | null;
  findings: string;
  classification: string | null;
  tool_id: string;
  tool_version: string | null;
  updated_at: string;
}

export type ProviderEntryRow = Selectable<ProviderEntryTable>;

/** An owner team's notification channel (migration 0033); `url` is never shown once stored. */
export interface OwnerChannelTable {
  id: string;
  team: string;
  kind: 'webhook';
  /** The URL in plain on a row from before migration 0042 until it is sealed; else ''. */
  url: string;
  created_at: string;
  created_by: string;
  /** The name an applied file gives it, unique in its team; null for one added by hand. */
  name: string | null;
  /** The URL sealed with the master key (JSON: version, key id, nonce, ciphertext, tag). */
  url_sealed: string | null;
  /** HMAC-SHA256 of the URL under a key derived from the master key: one URL once per team. */
  url_key: string | null;
  /** The URL's origin, all anyone is shown of it. */
  url_hint: string | null;
  updated_at: string | null;
}

/** When a notice of a kind was last sent for a tool version (deduplication, migration 0033). */
export interface OwnerNoticeMarkTable {
  kind: string;
  tool_id: string;
  tool_version: string;
  sent_at: string;
}
