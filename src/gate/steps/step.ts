/**
 * @module What every step of the gate shares: the state of one call, the services the steps use,
 * and what a step answers — go on (having filled in its part of the state), refuse (the gate
 * audits it as a denial), or a decision that ends the call (pending approval, a replayed or
 * executed result). Step order: docs/architecture.md §3.
 */

import type { Clock } from '../../core/index.js';
import type {
  CatalogService,
  HealthGate,
  ToolDefinition,
  ToolVersionDetail,
} from '../../domain/catalog/index.js';
import type { CredentialBroker } from '../../domain/credentials/index.js';
import type { ApprovalDesk, ScopeUse, UntrustedDestination } from '../../domain/decisions/index.js';
import type { IdempotencyStore } from '../../domain/idempotency/index.js';
import type {
  AgentCeilings,
  AgentView,
  OAuthResourceServerConfig,
  SessionBudgets,
} from '../../domain/identity/index.js';
import type { CallCounters, CeilingCall } from '../../domain/limits/index.js';
import type { SetMembership } from '../../domain/policy/index.js';
import type { GovernedUris, SessionService, SessionTool } from '../../domain/sessions/index.js';
import type { RuntimeRegistry } from '../../execution/runtimes/index.js';
import type { SessionRow } from '../../records/store/index.js';
import type { AuditWriter } from '../audit-writer.js';
import type { CallContext, CallOptions } from '../call-context.js';
import type { CallSpan, ChildSpan } from '../call-tracer.js';
import type { DenyCode, DeprecationNotice, GateDecision } from '../decision.js';
import type { IdentityCache } from '../identity-cache.js';
import type { PreviewRunner } from '../preview-runner.js';
import type { CompiledTool, ToolCache } from '../tool-cache.js';
import type { AfterInjection } from './after-injection.js';
import type { ExecuteResult, ExecuteRun } from './run-result.js';

/** The services the steps call; built once per gate, shared by every call. */
export interface StepDependencies {
  readonly sessions: SessionService;
  readonly approvals: ApprovalDesk;
  /** One runtime per kind (docs/architecture.md §4). */
  readonly runtimes: RuntimeRegistry;
  readonly credentials: Pick<CredentialBroker, 'forCall'> | undefined;
  readonly clock: Clock;
  readonly audit: AuditWriter;
  readonly counters: CallCounters;
  readonly idempotency: IdempotencyStore;
  readonly tools: ToolCache;
  readonly identities: IdentityCache;
  /** Live destination sets (policy step); none: a rule naming a set refuses (fail closed). */
  readonly destinationSets: SetMembership | undefined;
  /** Counts a result record that could not be written (never thrown at a caller). */
  readonly lostPostRecord: () => void;
  /** Runs declared previews for reviewers (preview-runner.ts); none: no preview is run. */
  readonly previews: Pick<PreviewRunner, 'start'> | undefined;
  /** What waits for a reviewer once injection text entered a session (after-injection.ts). */
  readonly afterInjection: AfterInjection;
  /** The health monitor's hot-path side (C14): fail fast on an unavailable tool, passive health. */
  readonly health: HealthGate;
  /** What a resource URI names over every provider; none: template reads are refused. */
  readonly governedUris: Pick<GovernedUris, 'resolve'> | undefined;
  /** The OAuth resource server's scopes and the tools on offer (scope step); none: no OAuth. */
  readonly scopes: ScopeSource | undefined;
}

/** What the scope step reads: the configured scopes, and the tools the catalog offers now. */
export interface ScopeSource {
  readonly config: Pick<OAuthResourceServerConfig, 'scopes'>;
  readonly catalog: Pick<CatalogService, 'offered' | 'offeredMajors'>;
}

/** The fields every audit record of this call shares. */
export interface AuditBase {
  readonly at: Date;
  readonly callId: string;
  readonly sessionId: string;
  readonly runId: string;
  readonly agentId: string;
  readonly userId: string | null;
  /** The call's W3C trace id (its span's, else the caller's), null when it has none. */
  readonly traceId: string | null;
  readonly model?: string;
}

const NO_UNTRUSTED: readonly UntrustedDestination[] = Object.freeze([]);

/**
 * One call on its way through the steps. Each step fills in its own fields and reads only those
 * of the steps before it (the declared order guarantees they are set): one object per call, so
 * going through the steps allocates nothing per step.
 */
export class CallState {
  readonly deps: StepDependencies;
  readonly ctx: CallContext;
  readonly toolRef: unknown;
  /** The caller's arguments; for a resource read, `resolve` sets the template's bound variables. */
  args: unknown;
  readonly options: CallOptions;
  readonly callId: string;
  readonly started: number;
  /** The call's span when tracing is on (call-tracer.ts), and the open child of the running step. */
  span: CallSpan | null = null;
  stepSpan: ChildSpan | null = null;
  /** The call's trace id: its span's, else the caller's `traceparent`'s; null for neither. */
  traceId: string | null = null;

  // session
  session!: SessionRow;
  now!: Date;
  base!: AuditBase;
  // resolve: named in refusals from here on (null: the caller learns nothing about the tool)
  compiled!: CompiledTool;
  detail!: ToolVersionDetail;
  def!: ToolDefinition;
  ref: { readonly id: string; readonly version: string } | null = null;
  /** The session's entry for the tool (its default version and the majors it may pin). */
  entry: SessionTool | null = null;
  /** The major the caller pinned (`name@1`), null for the session's default version. */
  pinnedMajor: number | null = null;
  /** A resource read's URI, matched to this entry by `resolve` (`policy` does not match it again). */
  readUri: string | null = null;
  // lifecycle
  warnings!: string[];
  /** Set when the version is deprecated: what the fronts turn into headers and `_meta`. */
  deprecation: DeprecationNotice | null = null;
  // schema: the call's own copy of its arguments, rewritten by policy to their checked form
  callArgs!: Record<string, unknown>;
  cents = 0;
  // grant
  agent!: AgentView;
  // policy: hosts the tool may reach, and the ones this call's URL arguments named
  hosts!: readonly string[];
  destinations!: Set<string>;
  // policy (provenance.ts): argument values the run first saw in an untrusted result
  untrustedDestinations: readonly UntrustedDestination[] = NO_UNTRUSTED;
  /**
   * policy (provenance.ts): sources whose instruction-like text reached this run or this (agent,
   * user) within the window though not this session; null when none did or nobody looked.
   */
  injectionElsewhere: readonly string[] | null = null;
  // flow
  who!: CeilingCall;
  // idempotency lookup (the hash is what approval binds and idempotency compares)
  argsHash!: string;
  idemKey: string | null = null;
  // idempotency claim: this call holds its key (given back if nothing runs, claim step)
  claimHeld = false;
  // approval: the session's untrusted sources when the after-injection rule made the call wait
  afterInjection: { readonly untrusted_sources: readonly string[] } | null = null;
  /** The approval the call runs on; `scope` when a scoped approval covered it (which use). */
  approval: {
    readonly approvalId: string;
    readonly approver: string;
    readonly scope?: ScopeUse;
  } | null = null;
  // limits: the session budgets, and the rolling ceilings that hold (the defaults filled in)
  budgets!: SessionBudgets;
  ceilings!: AgentCeilings;
  egressLeft: number | undefined = undefined;
  // execute, result
  /** Set as the execute step begins: from here on the tool may have run. */
  runStarted = false;
  run!: ExecuteRun;
  result!: ExecuteResult;

  constructor(
    deps: StepDependencies,
    ctx: CallContext,
    toolRef: unknown,
    args: unknown,
    options: CallOptions,
    callId: string,
    started: number,
  ) {
    this.deps = deps;
    this.ctx = ctx;
    this.toolRef = toolRef;
    this.args = args;
    this.options = options;
    this.callId = callId;
    this.started = started;
  }
}

/** A step's refusal: the gate audits it as `call.denied` and answers with a denial. */
export interface Refusal {
  readonly kind: 'refuse';
  readonly code: DenyCode;
  readonly rule: string;
  readonly message: string;
  readonly details?: unknown;
  /** The reason auditors see when the caller is told less (a quarantined tool is "not registered"). */
  readonly auditedRule?: string;
  /** The refusal names no tool (the caller is told it does not exist). */
  readonly anonymous?: boolean;
}

/** Go on with the next step. */
export const CONTINUE = undefined;

/** Go on, refuse, or end the call with this decision. */
export type StepResult = typeof CONTINUE | Refusal | GateDecision;

export interface Step {
  /** Stable, for traces and the order test. */
  readonly name: string;
  /** Synchronous where it can be: the gate awaits only a returned promise. */
  readonly run: (state: CallState) => StepResult | Promise<StepResult>;
}

export function refuse(code: DenyCode, rule: string, message: string, details?: unknown): Refusal {
  return details === undefined
    ? { kind: 'refuse', code, rule, message }
    : { kind: 'refuse', code, rule, message, details };
}

/**
 * The principal a call's health outcome is attributed to (C14): the session's agent and the user
 * it acts for, never a credential string. The monitor needs several of them to fail before it
 * takes a tool away from everyone (src/operations/health/circuit-breaker.ts).
 */
export function healthCaller(s: CallState): string {
  return JSON.stringify([s.session.agent_id, s.session.user_id]);
}
