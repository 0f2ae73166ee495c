/**
 * @module What an agent-facing front (REST agent routes, MCP over HTTP and stdio) may use: check a
 * credential, open and close its sessions, list what a session offers, call through the gate. No
 * member reaches the store, the sandbox, the credential broker or the gate's internals, so a front
 * cannot run a tool except through `invoke` (docs/architecture.md §6).
 */
import type { AgentPrincipal, ToolgateError } from '../core/index.js';
import type { RequestStateSealer } from '../domain/decisions/index.js';
import type { KeyOutcomeView } from '../domain/idempotency/index.js';
import { bearerChallenge, type ProtectedResourceMetadata } from '../domain/identity/index.js';
import type {
  AgentDiscovery,
  RunService,
  SessionEntries,
  SessionService,
} from '../domain/sessions/index.js';
import type { CallContext, CallOptions, GateDecision, InProcessCall } from '../gate/index.js';

/** The session methods an agent front is given (the type and the object share this list). */
export const SESSIONS_AGENT = [
  'open',
  'close',
  'evict',
  'require',
  'refresh',
  'exportTools',
] as const;

/** What the fronts need of the OAuth resource server (MCP authorization), when one is configured. */
export interface OAuthFront {
  /** The RFC 9728 document published at `metadataUrl` (and the root well-known path). */
  readonly metadata: ProtectedResourceMetadata;
  /** Where a client finds `metadata`; named in every Bearer challenge. */
  readonly metadataUrl: string;
}

/**
 * The `WWW-Authenticate` value of a step-up (the gate's INSUFFICIENT_SCOPE refusal, its `scope`
 * detail): `Bearer resource_metadata=…, error="insufficient_scope", scope=…` (RFC 6750 §3.1), the
 * same for every front that calls a tool.
 */
export function stepUpChallenge(oauth: OAuthFront | null, scope: string): string {
  return bearerChallenge({
    ...(oauth ? { resourceMetadata: oauth.metadataUrl } : {}),
    error: 'insufficient_scope',
    scope: scope.split(' '),
  });
}

/**
 * The entry methods an agent front is given: list the offered ones. A read or get is handed to
 * `invoke` as an EntryRef; the gate's `resolve` step finds the entry.
 */
export const ENTRIES_AGENT = ['list'] as const;

/** The discovery methods an agent front is given: search its own session, or its own set. */
export const DISCOVERY_AGENT = ['inSession', 'forAgent'] as const;

/**
 * What an agent may know of an approval one of its own calls waits for: whether it was decided,
 * and how. Never who decided it (an operator's identity is not the agent's business).
 */
export interface AgentApprovalStatus {
  readonly approval_id: string;
  readonly status: 'pending' | 'approved' | 'rejected' | 'consumed' | 'expired' | 'withdrawn';
  readonly tool: string;
  readonly version: string;
  readonly expires_at: string;
  readonly decided_at: string | null;
  /** The rejecting approver's reason, or why the approval was withdrawn; null otherwise. */
  readonly reason: string | null;
}

/**
 * What became of the call a principal made under an idempotency key (`GET
 * /v1/sessions/:id/idempotency/:key`): `succeeded` with its output and trust label, `failed` with
 * its code, rule and message, `running` (it has not ended yet), or `unknown` (it was started and
 * its outcome was not recorded: it may have run). Never "use a new key".
 */
export type AgentCallOutcome = KeyOutcomeView;

/**
 * Announcements that the catalog or identity revisions moved: on PostgreSQL each change's
 * transaction sends one (`LISTEN/NOTIFY`, any replica's change and this process's), so a front
 * re-reads at once instead of polling (docs/architecture.md §5, "Replicas that agree").
 */
export interface RevisionAnnouncements {
  /** Whether announcements can arrive now; while false (SQLite, a lost connection) poll. */
  readonly listening: boolean;
  /**
   * Calls `fn` at each announcement, and when announcements resume after a gap (what changed
   * meanwhile was not announced). Returns the unsubscribe.
   */
  onMoved(fn: () => void): () => void;
}

/** The run methods an agent front is given: mint a handle, explain a refused one, revoke one. */
export const RUNS_AGENT = ['mint', 'refusal', 'revoke'] as const;

export interface AgentApi {
  /**
   * The principal a bearer credential proves (API key, agent JWT or OAuth access token, when
   * configured), or null: the one authenticator (AgentAuthenticator), called once per request
   * by every front; the principal is then carried as it is.
   */
  authenticate(token: string, peer?: string): Promise<AgentPrincipal | null>;
  /**
   * The agent's own sessions: open, close, check the caller still holds one (`require`), re-derive
   * its permitted set (`refresh`), the tools it offers (`exportTools`, discovery as the agent sees
   * it: nothing outside its permitted set), and `evict` (a front at capacity closes one, audited).
   */
  readonly sessions: Pick<SessionService, (typeof SESSIONS_AGENT)[number]>;
  /**
   * Upstream resources, resource templates and prompts the session offers (governed entries:
   * classified, reviewed, granted). A read or get is `invoke` with an EntryRef (the URI or the
   * listed name as sent): the gate resolves it, the front looks nothing up.
   */
  readonly entries: Pick<SessionEntries, (typeof ENTRIES_AGENT)[number]>;
  /**
   * Capability search with the agent's own credential, within its own permitted set only (a
   * session's, or the set a session opened now would get): never the global catalog.
   */
  readonly discovery: Pick<AgentDiscovery, (typeof DISCOVERY_AGENT)[number]>;
  /** Runs: the handles stateless (2026-07-28) MCP clients carry instead of an MCP session. */
  readonly runs: Pick<RunService, (typeof RUNS_AGENT)[number]>;
  /**
   * Runs one call through the gate: the only way a front runs a tool. `toolRef` is a tool name
   * (or id, `name@major`), or an EntryRef for a resource read or a prompt get. Returns a decision
   * for anything the caller sends (an approval waiting is a decision too).
   */
  invoke(
    call: CallContext | InProcessCall,
    toolRef: unknown,
    args: unknown,
    options?: CallOptions,
  ): Promise<GateDecision>;
  /**
   * The gate's steps up to `scope`, for a front that must answer a step-up before it hands the
   * request on (MCP over HTTP: 403 with the challenge at the HTTP level). The gate decides and
   * audits (`call.denied` in the caller's session when one is named, else a
   * `call.step_up_refused` event of the principal); the front renders the INSUFFICIENT_SCOPE
   * error it returns (`stepUpChallenge`), or goes on when it returns null.
   */
  stepUp(
    call: { readonly principal: AgentPrincipal; readonly sessionId?: string | undefined },
    toolRef: unknown,
    args: unknown,
    via: string,
  ): Promise<ToolgateError<'INSUFFICIENT_SCOPE'> | null>;
  /**
   * Seals and opens the `requestState` of a call waiting for approval (MCP 2026-07-28): the key
   * stays inside; a front sees only the claims of a state that verified.
   */
  readonly requestStates: Pick<RequestStateSealer, 'seal' | 'open'>;
  /** The OAuth resource server, or null when toolgate takes no OAuth access tokens. */
  readonly oauth: OAuthFront | null;
  /** Catalog and identity revisions: they change whenever what any session may see changes. */
  revisions(): Promise<{ catalog: number; identity: number }>;
  /** Announcements that the revisions moved, where the store carries them. */
  readonly revisionAnnouncements: RevisionAnnouncements;
  /**
   * The status of an approval a call of the caller's own session waits for (the client SDK polls
   * it, docs/architecture.md §6). Another session's approval, or one that does not exist, is the
   * same NOT_FOUND; a session not the caller's is SESSION_NOT_FOUND, as for every session route.
   */
  approvalStatus(
    sessionId: string,
    who: AgentPrincipal,
    approvalId: string,
  ): Promise<AgentApprovalStatus>;
  /**
   * Holds a call the gate answered pending (MCP: docs/mcp.md, "Stock clients wait for the
   * person") until approval `approvalId` — the caller's principal's, asked in this session or
   * another of its runs — leaves `pending`, at most `timeoutMs`, or until `signal` aborts.
   * `settled`: ask the gate again with the approval bound (`boundApproval`, `via: 'wait'`), which
   * decides; `pending`: answer the call as still waiting. Decides nothing itself; another
   * principal's approval, or none, is `pending` at once.
   */
  awaitApproval(
    sessionId: string,
    who: AgentPrincipal,
    approvalId: string,
    options: { readonly timeoutMs: number; readonly signal: AbortSignal },
  ): Promise<'settled' | 'pending'>;
  /**
   * The outcome of the call the caller's principal (its agent and the session's user) made under
   * an idempotency key to a tool of the caller's own session (the SDK asks after its own retry was
   * told the first call has not finished). A key never used, expired, of another principal or of
   * a tool outside the session's set is the same IDEMPOTENCY_KEY_NOT_FOUND; a session not the
   * caller's is SESSION_NOT_FOUND, as for every session route.
   */
  callOutcome(
    sessionId: string,
    who: AgentPrincipal,
    tool: string,
    idempotencyKey: string,
  ): Promise<AgentCallOutcome>;
  /**
   * Of these gate sessions, those whose calls wait on an unexpired approval (pending, or approved
   * and not yet retried): a front evicting sessions for room never ends one of them.
   */
  waitingOnApproval(sessionIds: readonly string[]): Promise<ReadonlySet<string>>;
}

/**
 * Refusals no service sees (a refused Origin, a session presented by another principal…), written
 * to the events table and the audit chain. Handed to the MCP front beside the agent API.
 */
export interface SecurityEvents {
  /**
   * `caller`, given for a refusal of what someone sent (before authentication, anyone may send
   * anything): every string of `details` is then masked as a refusal's text is (quoted segments,
   * personal data the detectors find, and each of `caller.sent` wherever it appears, replaced by
   * keyed hashes), and `caller.hashed` are fields whose value is the caller's whole (a header as
   * sent, the peer's address), recorded only as their keyed hashes. Without it, `details` are the
   * gateway's own words and identifiers, kept as they are. docs/security-model.md, "Personal data
   * and the audit log".
   */
  record(
    action: string,
    subject: string,
    details: Record<string, unknown>,
    caller?: CallerValues,
  ): Promise<void>;
  /** The keyed hash a record gives `value` (a peer's address, a header as sent). */
  pseudonym(value: string): string;
  /**
   * Like `record` without `caller`, for a refusal anyone may cause again and again (a stored key id
   * with a wrong secret): sampled per peer (its address as sent, recorded as its keyed hash) and
   * per value, the rest counted in an `<action>.summary` record (docs/security-model.md).
   */
  sampled(
    action: string,
    subject: string,
    details: Record<string, unknown>,
    key: { readonly peer?: string | undefined; readonly value: string },
  ): Promise<void>;
}

/** What a caller supplied to a refusal recorded as a security event (SecurityEvents.record). */
export interface CallerValues {
  /** Fields recorded as the keyed hash of the caller's value, never the value. */
  readonly hashed?: Readonly<Record<string, string>>;
  /** Values the caller sent that the details' text may quote: each replaced by its keyed hash. */
  readonly sent?: readonly string[];
}
