/**
 * @module The gate (DESIGN.md §1): the one pipeline every front calls. Resolve, lifecycle,
 * schema, grant and tier, argument policy, limits, flow, approval, audit-pre, execute, result,
 * audit-post. Every step fails closed; every denial is audited and answered with a code, the
 * rule that fired and a message that names nothing outside the caller's own tool set.
 */
import type { ValidateFunction } from 'ajv';
import { approvalRequired, argumentsHash } from '../approvals/index.js';
import {
  type CatalogService,
  createToolSchemaCompiler,
  effectiveLifecycleOf,
  type ToolDefinition,
  type ToolVersionDetail,
} from '../catalog/index.js';
import {
  type Clock,
  exceedsDepth,
  isToolgateError,
  systemClock,
  ToolgateError,
  timeOrderedId,
} from '../core/index.js';
import {
  type CallCredentials,
  type CredentialBroker,
  redactSecrets,
} from '../credentials/index.js';
import type {
  AgentService,
  AgentView,
  SessionBudgets,
  UserService,
  UserView,
} from '../identity/index.js';
import {
  type CedarDecision,
  type CedarRequest,
  checkPath,
  checkSizes,
  checkUrl,
  MAX_SCHEMA_DEPTH,
  type PolicyTarget,
  policyTargets,
  valuesAt,
} from '../policy/index.js';
import {
  type RuntimeContext,
  type RuntimeFailure,
  type RuntimeRegistry,
  type RuntimeSuccess,
  runtimeFailure,
} from '../runtimes/index.js';
import { type ByteBudget, createByteBudget } from '../sandbox/index.js';
import {
  localIdentityChangeCount,
  readRevisions,
  type SessionRow,
  type Store,
} from '../store/index.js';
import type { ApprovalDesk } from './approval-desk.js';
import { type AuditRecord, AuditWriter } from './audit-writer.js';
import { CANCELLED, type CallProgress } from './call-progress.js';
import {
  admitCall,
  chargeEgress,
  readPrivateRecently,
  recordPrivateRead,
  sweepCeilingCounters,
} from './ceilings.js';
import {
  type DenyCode,
  deny,
  type GateDecision,
  type McpToolResult,
  type RenderedCall,
} from './decision.js';
import { idempotencyScope } from './idempotency-scope.js';
import {
  checkSpentBudgets,
  sweepRateCounters,
  takeExternalSend,
  takeRateLimits,
} from './limits.js';
import { attemptedName, redactArguments } from './redaction.js';
import type { SessionPrincipal } from './session-principal.js';
import type { SessionService, SessionTool } from './session-service.js';
import { costOf } from './spend.js';

/**
 * Who is calling: an authenticated principal (agent, and the credential and token user the front
 * verified) in one of its sessions. The session must have been opened by the same principal.
 */
export interface CallContext extends SessionPrincipal {
  readonly agentId: string;
  readonly sessionId: string;
  /** The model behind the agent, as the agent reports it (audited, not trusted). */
  readonly model?: string;
}

export interface CallOptions {
  /** Same key and same arguments → the first result; same key, other arguments → refused. */
  readonly idempotencyKey?: string;
  /** Receives an upstream MCP tool's progress while it runs (never after the call returned). */
  readonly onProgress?: (progress: CallProgress) => void;
  /** Withdraws the call: not run if not yet started; an upstream MCP call is cancelled upstream. */
  readonly signal?: AbortSignal;
}

/** An org policy engine (Cedar); the gate builds its request. */
export interface PolicyEngine {
  appliesTo(tool: { id: string; action_class: string; tags: readonly string[] }): boolean;
  evaluate(request: CedarRequest): CedarDecision;
  /** False when no policy reads the session's counters; absent means it may. */
  readonly readsSessionCounters?: boolean;
}

/** Where the gate gets its policy engine: fixed (library use) or loaded from stored policies. */
export type PolicySupplier = () => Promise<PolicyEngine | null>;

interface CompiledTool {
  readonly detail: ToolVersionDetail;
  readonly validateInput: ValidateFunction;
  readonly validateOutput: ValidateFunction;
  readonly targets: readonly PolicyTarget[];
}

/** How long a catalog or identity change made by another process may take to reach this gate. */
const REVISION_CHECK_MS = 200;
/** Open sessions kept in memory; past this the oldest is dropped (and read again when used). */
const SESSION_CACHE_MAX = 10_000;
const IDEMPOTENCY_KEY = /^[A-Za-z0-9_.:-]{1,128}$/;
/** How long an idempotency key answers with its first result (and refuses other arguments). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export interface GateDependencies {
  readonly store: Store;
  readonly catalog: CatalogService;
  readonly agents: AgentService;
  readonly users: UserService;
  readonly sessions: SessionService;
  readonly approvals: ApprovalDesk;
  /** The runtime of each kind (docs/architecture.md §4); a tool of a missing kind is refused. */
  readonly runtimes: RuntimeRegistry;
  /** Opens a tool's own credential for one call, after the gate passed. */
  readonly credentials?: Pick<CredentialBroker, 'forCall'>;
  /** Loads the org policy engine; called again after every catalog or policy change. */
  readonly policies?: PolicySupplier;
  readonly clock?: Clock;
  /** The chained audit log's writer (shared with the checkpointer); one of its own when absent. */
  readonly audit?: AuditWriter;
}

export class Gate {
  readonly #d: GateDependencies;
  readonly #clock: Clock;
  // Each tool schema is compiled under the dialect it declares (2020-12, or an upstream's draft-07).
  readonly #ajv = createToolSchemaCompiler();
  readonly #audit: AuditWriter;
  #lostPostRecords = 0;
  #cache = new Map<string, CompiledTool>();
  #engine: Promise<PolicyEngine | null> | null = null;
  #revision = -1;
  #revisionCheckedAt = 0;
  // Identity cache: agents (with grants), users and open sessions, as of one identity revision.
  // Dropped at once when this process changes an identity, and within REVISION_CHECK_MS when
  // another process does. Counters that other replicas also write (budgets, the private-read
  // flag) are read fresh wherever a decision depends on them.
  #identityRevision = -1;
  #identityLocal = -1;
  #identityGeneration = 0;
  #agents = new Map<string, AgentView>();
  #users = new Map<string, UserView>();
  /** Whether a user a token vouches for is disabled here, per identity revision like #users. */
  #usersDisabled = new Map<string, boolean>();
  #sessionRows = new Map<string, SessionRow>();
  #egressBudgets = new Map<string, ByteBudget>();

  constructor(deps: GateDependencies) {
    this.#d = deps;
    this.#clock = deps.clock ?? systemClock;
    this.#audit = deps.audit ?? new AuditWriter(deps.store);
    // Changes made in this process reach the gate at once; other processes within REVISION_CHECK_MS.
    deps.catalog.onCommit(() => this.#invalidate());
  }

  /** Waits until every audit record queued so far is committed; call before closing the store. */
  async flush(): Promise<void> {
    await this.#audit.flush();
  }

  /**
   * Housekeeping for a running gateway: expired rate and ceiling counters are removed, and
   * idempotency keys older than IDEMPOTENCY_TTL_MS (a retry after that runs as a new call).
   * Returns how many of each.
   */
  async sweep(): Promise<{
    rateCounters: number;
    idempotencyKeys: number;
    ceilingCounters: number;
  }> {
    const now = this.#clock();
    const rateCounters = await sweepRateCounters(this.#d.store.db, now);
    const ceilingCounters = await sweepCeilingCounters(this.#d.store.db, now);
    const removed = await this.#d.store.db
      .deleteFrom('idempotency')
      .where('created_at', '<', new Date(now.getTime() - IDEMPOTENCY_TTL_MS).toISOString())
      .executeTakeFirst();
    return { rateCounters, idempotencyKeys: Number(removed.numDeletedRows), ceilingCounters };
  }

  /** Result records that could not be written (their pre records exist). */
  get lostPostRecords(): number {
    return this.#lostPostRecords;
  }

  #invalidate(): void {
    this.#cache = new Map();
    this.#engine = null;
    this.#ajv.reset();
    this.#revisionCheckedAt = 0;
  }

  #dropIdentities(): void {
    this.#identityGeneration += 1;
    this.#agents = new Map();
    this.#users = new Map();
    this.#usersDisabled = new Map();
    this.#sessionRows = new Map();
    // A changed agent may have a changed egress budget: pools are rebuilt from the stored spend.
    this.#egressBudgets = new Map();
  }

  /** Drops what changed since the last look: at once for this process, polled for others. */
  async #refresh(): Promise<void> {
    const local = localIdentityChangeCount();
    if (local !== this.#identityLocal) {
      this.#dropIdentities();
      this.#identityLocal = local;
    }
    const nowMs = Date.now();
    if (nowMs - this.#revisionCheckedAt <= REVISION_CHECK_MS) return;
    const revisions = await readRevisions(this.#d.store.db);
    if (revisions.catalog !== this.#revision) {
      this.#invalidate();
      this.#revision = revisions.catalog;
    }
    if (revisions.identity !== this.#identityRevision) {
      this.#dropIdentities();
      this.#identityRevision = revisions.identity;
    }
    this.#revisionCheckedAt = nowMs;
  }

  /** Reads through the identity cache; a read that raced an invalidation is not kept. */
  async #cached<T>(map: Map<string, T>, key: string, load: () => Promise<T>): Promise<T> {
    const hit = map.get(key);
    if (hit !== undefined) return hit;
    const generation = this.#identityGeneration;
    const value = await load();
    if (generation === this.#identityGeneration) {
      if (map.size >= SESSION_CACHE_MAX) {
        const oldest = map.keys().next();
        if (!oldest.done) map.delete(oldest.value);
      }
      map.set(key, value);
    }
    return value;
  }

  async #session(sessionId: string, who: SessionPrincipal): Promise<SessionRow> {
    const cached = this.#sessionRows.get(sessionId);
    if (cached) return this.#d.sessions.admit(cached, sessionId, who);
    return this.#cached(this.#sessionRows, sessionId, () =>
      this.#d.sessions.require(sessionId, who),
    );
  }

  /** The session as stored now: for decisions on counters other processes may have moved. */
  async #freshSession(sessionId: string, who: SessionPrincipal): Promise<SessionRow> {
    const row = await this.#d.sessions.require(sessionId, who);
    if (this.#sessionRows.has(sessionId)) this.#sessionRows.set(sessionId, row);
    return row;
  }

  #updateCachedSession(sessionId: string, change: (row: SessionRow) => SessionRow): void {
    const row = this.#sessionRows.get(sessionId);
    if (row) this.#sessionRows.set(sessionId, change(row));
  }

  async #compiled(id: string, version: string): Promise<CompiledTool | null> {
    const key = `${id}@${version}`;
    const hit = this.#cache.get(key);
    if (hit) return hit;
    let detail: ToolVersionDetail;
    try {
      detail = await this.#d.catalog.get(id, version);
    } catch {
      return null;
    }
    let compiled: CompiledTool;
    try {
      compiled = {
        detail,
        validateInput: this.#ajv.compile(detail.definition.input_schema),
        validateOutput: this.#ajv.compile(detail.definition.output_schema),
        targets: policyTargets(detail.definition.input_schema),
      };
    } catch {
      // Registration refuses such schemas; one that slipped through is treated as absent.
      return null;
    }
    this.#cache.set(key, compiled);
    return compiled;
  }

  /**
   * Runs one call through every step. Returns a decision for anything the caller sends; throws
   * only SESSION_NOT_FOUND (no valid session: nothing to decide for) and store failures.
   */
  async invoke(
    ctx: CallContext,
    toolRef: unknown,
    args: unknown,
    options: CallOptions = {},
  ): Promise<GateDecision> {
    const callId = timeOrderedId('call_');
    const started = performance.now();
    await this.#refresh();
    let session = await this.#session(ctx.sessionId, ctx);
    const now = this.#clock();
    const base = {
      at: now,
      callId,
      sessionId: session.id,
      runId: session.run_id,
      agentId: ctx.agentId,
      userId: session.user_id,
      ...(ctx.model !== undefined ? { model: ctx.model.slice(0, 200) } : {}),
    };
    const refusal = async (
      code: DenyCode,
      rule: string,
      message: string,
      tool: { id: string; version: string } | null,
      details?: unknown,
      // The reason auditors see when the caller is told less (a quarantined tool is "not registered").
      auditedRule: string = rule,
    ): Promise<GateDecision> => {
      const record: AuditRecord = {
        ...base,
        kind: 'call.denied',
        toolId: tool?.id ?? null,
        toolVersion: tool?.version ?? null,
        argsHash: safeHash(args),
        argsRedacted: redactArguments(args),
        decision: 'deny',
        code,
        rule: auditedRule,
        message,
        durationMs: performance.now() - started,
        // The attempted name is recorded for unregistered probes (C16), bounded; a name shaped
        // like a credential (a key pasted as the tool) is masked: the log can never drop it.
        details: tool ? {} : { attempted: attemptedName(toolRef) },
      };
      await this.#audit.append(record);
      return deny(callId, code, rule, message, details);
    };

    if (session.suspended === 1) {
      return refusal(
        'SESSION_SUSPENDED',
        'session.suspended',
        'this session was suspended after a security alert; open a new session',
        null,
      );
    }

    // 1 resolve: only within the session's own set, by exported name or id.
    const set = toolSetOf(session);
    const entry =
      typeof toolRef === 'string'
        ? set.find((t) => t.name === toolRef || t.id === toolRef)
        : undefined;
    if (!entry)
      return refusal('TOOL_NOT_REGISTERED', 'resolve.not_registered', 'tool not registered', null);
    const compiled = await this.#compiled(entry.id, entry.version);
    if (!compiled)
      return refusal('TOOL_NOT_REGISTERED', 'resolve.not_registered', 'tool not registered', null);
    const { detail } = compiled;
    const def = detail.definition;
    const ref = { id: detail.id, version: detail.version };

    // 2 lifecycle (effective now, whatever the session saw at open)
    if (detail.quarantined)
      return refusal(
        'TOOL_NOT_REGISTERED',
        'resolve.not_registered',
        'tool not registered',
        null,
        undefined,
        'lifecycle.quarantined',
      );
    const lifecycle = effectiveLifecycleOf(detail, now);
    if (lifecycle === 'retired' || lifecycle === 'draft') {
      return refusal(
        'TOOL_RETIRED',
        `lifecycle.${lifecycle}`,
        `${detail.name} is ${lifecycle} and can no longer be called`,
        ref,
      );
    }
    const warnings =
      lifecycle === 'deprecated'
        ? [
            `${detail.name} ${detail.version} is deprecated and retires ${detail.retire_at ?? 'soon'}`,
          ]
        : [];

    // 3 schema
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      return refusal('INPUT_INVALID', 'schema.type', 'arguments must be a JSON object', ref);
    }
    if (exceedsDepth(args, MAX_SCHEMA_DEPTH)) {
      return refusal(
        'INPUT_INVALID',
        'schema.depth',
        `arguments nest deeper than ${MAX_SCHEMA_DEPTH} levels`,
        ref,
      );
    }
    const sizes = checkSizes(args, {
      maxArgumentBytes: def.arguments_policy.max_argument_bytes,
      maxCallBytes: def.arguments_policy.max_call_bytes,
    });
    if (!sizes.ok) return refusal('INPUT_INVALID', sizes.rule, sizes.message, ref);
    if (!compiled.validateInput(args)) {
      const problems = (compiled.validateInput.errors ?? []).slice(0, 20).map((e) => ({
        pointer: e.instancePath,
        message: e.message ?? 'is invalid',
        rule: `schema.${e.keyword}`,
      }));
      return refusal(
        'INPUT_INVALID',
        problems[0]?.rule ?? 'schema',
        'arguments do not match the input schema',
        ref,
        { problems },
      );
    }
    // From here on the call works on its own copy: policy resolution rewrites URL and path
    // arguments to their checked form, and that form is what is approved, hashed and run.
    const callArgs = cloneArguments(args as Record<string, unknown>);
    // What the call would cost, read exactly now: a cost that cannot be read is bad input, refused
    // before anything is approved or counted.
    const cost = costOf(def.cost, callArgs);
    if (!cost.ok) return refusal('INPUT_INVALID', 'cost.invalid', cost.message, ref);

    // 4 grant and tier, live: a grant revoked after the session opened stops the next call.
    // One read of the agent serves grants, budgets and the policy request.
    const agent = await this.#cached(this.#agents, ctx.agentId, () =>
      this.#d.agents.get(ctx.agentId),
    );
    const loadUser = (id: string) => this.#cached(this.#users, id, () => this.#d.users.get(id));
    const isDisabled = (id: string) =>
      this.#cached(this.#usersDisabled, id, () => this.#d.users.disabled(id));
    const caps = await this.#d.sessions.capabilities(
      ctx.agentId,
      session.user_id,
      session.user_permissions === null ? null : (JSON.parse(session.user_permissions) as string[]),
      agent,
      loadUser,
      isDisabled,
    );
    const missing = def.required_capabilities.filter((c) => !caps.has(c));
    if (missing.length > 0) {
      return refusal(
        'GRANT_MISSING',
        'grant.capability',
        `this session may not use ${detail.name}`,
        ref,
      );
    }

    // 5 argument policy (URL and path arguments), then org policy (Cedar) when one applies.
    const hosts = def.egress.mode === 'constrained' ? def.egress.hosts : [];
    const destinations = new Set<string>();
    for (const target of compiled.targets) {
      for (const { pointer, value } of valuesAt(callArgs, target.pointer)) {
        if (target.kind === 'url') {
          const verdict = checkUrl(value, {
            hosts: def.egress.mode === 'unconstrained' ? 'any' : hosts,
          });
          if (!verdict.ok)
            return refusal('POLICY_DENIED', verdict.rule, `${pointer}: ${verdict.message}`, ref);
          destinations.add(verdict.value.host);
          setAt(callArgs, pointer, verdict.value.url);
        } else {
          const verdict = await checkPath(value, { roots: def.arguments_policy.path_roots ?? [] });
          if (!verdict.ok)
            return refusal('POLICY_DENIED', verdict.rule, `${pointer}: ${verdict.message}`, ref);
          // The tool gets the contained real path, never the caller's spelling of it.
          setAt(callArgs, pointer, verdict.value.path);
        }
      }
    }
    let policy: PolicyEngine | null;
    try {
      this.#engine ??= this.#d.policies ? this.#d.policies() : Promise.resolve(null);
      policy = await this.#engine;
    } catch {
      // Policies that cannot be loaded never mean "no policies": fail closed.
      this.#engine = null;
      return refusal(
        'POLICY_DENIED',
        'cedar.unavailable',
        'organisation policies could not be loaded',
        ref,
      );
    }
    if (policy?.appliesTo({ id: detail.id, action_class: def.action_class, tags: def.tags })) {
      // Policies that test the session's counters decide on their stored values.
      if (policy.readsSessionCounters !== false) {
        session = await this.#freshSession(ctx.sessionId, ctx);
      }
      const user = !session.user_id
        ? null
        : session.user_permissions !== null
          ? { id: session.user_id, permissions: JSON.parse(session.user_permissions) as string[] }
          : await loadUser(session.user_id);
      const decision = policy.evaluate({
        agent: { id: agent.id, owner: agent.owner, capabilities: agent.capabilities },
        ...(user ? { user: { id: user.id, permissions: user.permissions } } : {}),
        tool: {
          id: detail.id,
          version: detail.version,
          action_class: def.action_class,
          data_access: def.data_access,
          egress: def.egress.mode,
          access_tier: def.access_tier,
          owner: def.owner,
          provenance: def.provenance,
          tags: def.tags,
        },
        context: {
          session_id: session.id,
          run_id: session.run_id,
          on_behalf_of: session.user_id ?? '',
          user_permissions: user?.permissions ?? [],
          private_data_read: session.private_data_read === 1,
          external_sends: session.external_sends,
          egress_bytes: session.egress_bytes,
          spend_cents: session.spend_cents,
          hour_utc: now.getUTCHours(),
          destination_host: [...destinations][0] ?? '',
          arguments: callArgs,
        },
      });
      if (decision.decision === 'deny') {
        // Cedar's reasons can quote request values: the audit keeps the policy id; the caller
        // gets the policy's own @reason when it has one.
        return refusal(
          'POLICY_DENIED',
          decision.rule ?? `cedar.${decision.policies[0] ?? 'forbid'}`,
          decision.reasons[0] ?? 'forbidden by policy',
          ref,
        );
      }
    }

    // 7 flow (checked before limits so a refused call spends no budget): after a private-data
    // read in this session, in any session of the same run, or in any session of this agent for
    // this user within the flow window (a fresh session or run id must not launder what was
    // read), nothing may leave through unconstrained egress.
    const who = { agentId: ctx.agentId, userId: session.user_id, now };
    if (
      def.egress.mode === 'unconstrained' &&
      (session.private_data_read === 1 ||
        (await this.#d.sessions.runHasReadPrivate(ctx.agentId, session.run_id)) ||
        (await readPrivateRecently(this.#d.store.db, who, agent.ceilings)))
    ) {
      return refusal(
        'TOXIC_FLOW',
        'flow.private_then_egress',
        'this session has read private data; unconstrained egress is refused',
        ref,
      );
    }

    // A replayed result or a refusal ends the call; a free key lets it go on.
    const settle = async (claimed: IdempotencyOutcome): Promise<GateDecision | null> => {
      if (claimed.kind === 'replay') {
        // A replay runs nothing, but it is a call the principal made and was answered: audited.
        await this.#audit.append({
          ...base,
          kind: 'call.replayed',
          toolId: detail.id,
          toolVersion: detail.version,
          argsHash,
          argsRedacted: redactArguments(callArgs),
          decision: 'allow',
          rule: 'idempotency.replay',
          details: { replayed_call_id: claimed.callId },
        });
        return {
          kind: 'allow',
          callId: claimed.callId,
          toolId: detail.id,
          version: detail.version,
          output: claimed.output,
          warnings,
          // An upstream MCP tool's stored result is replayed as the result it was.
          ...(def.runtime.kind === 'mcp' ? { mcpResult: claimed.output as McpToolResult } : {}),
        };
      }
      return claimed.kind === 'conflict'
        ? refusal('IDEMPOTENCY_CONFLICT', claimed.rule, claimed.message, ref)
        : null;
    };

    // Idempotency: a retry with the same key never runs twice. A finished call under the key is
    // replayed here; the key is claimed only once the call may run (after its approval), so
    // "pending → approved → retry with the same key" works.
    let argsHash: string;
    try {
      argsHash = argumentsHash(callArgs);
    } catch {
      // e.g. a lone UTF-16 surrogate: not representable as canonical JSON, never hashed or run.
      return refusal(
        'INPUT_INVALID',
        'schema.unicode',
        'arguments contain text that is not valid Unicode',
        ref,
      );
    }
    let idemKey: string | null = null;
    if (options.idempotencyKey !== undefined) {
      if (!IDEMPOTENCY_KEY.test(options.idempotencyKey)) {
        return refusal(
          'INPUT_INVALID',
          'idempotency.key',
          'idempotency key must be 1–128 letters, digits, _ . : -',
          ref,
        );
      }
      idemKey = idempotencyScope(ctx.agentId, session.user_id, detail.id, options.idempotencyKey);
      const claimed = await this.#lookupIdempotency(idemKey, argsHash);
      const settled = await settle(claimed);
      if (settled) return settled;
    }

    // 8 approval
    const need = approvalRequired(def.approval.mode, def.approval.conditions, callArgs);
    let approval: { approvalId: string; approver: string } | null = null;
    if (need.required) {
      const rendered: RenderedCall = {
        tool: detail.id,
        version: detail.version,
        action_class: def.action_class,
        arguments: callArgs,
        destination_hosts: destinations.size > 0 ? [...destinations] : hosts,
        conditions: need.matched,
        second_factor: def.approval.second_factor,
        out_of_band: def.approval.out_of_band,
      };
      const resolved = await this.#d.approvals.resolve({
        sessionId: session.id,
        agentId: ctx.agentId,
        userId: session.user_id,
        toolId: detail.id,
        toolVersion: detail.version,
        actionClass: def.action_class,
        argsHash,
        rendered,
      });
      if (resolved.kind === 'too_many') {
        return resolved.scope === 'agent'
          ? refusal(
              'RATE_LIMITED',
              'approval.agent_pending_cap',
              'this agent has too many calls waiting for approval',
              ref,
            )
          : refusal(
              'RATE_LIMITED',
              'approval.pending_cap',
              'this session has too many calls waiting for approval',
              ref,
            );
      }
      if (resolved.kind === 'pending') {
        await this.#audit.append({
          ...base,
          kind: 'call.pending_approval',
          toolId: detail.id,
          toolVersion: detail.version,
          argsHash,
          argsRedacted: redactArguments(callArgs),
          decision: 'pending_approval',
          approvalId: resolved.approvalId,
          rule: `approval.${def.action_class}`,
        });
        return {
          kind: 'pending_approval',
          callId,
          approvalId: resolved.approvalId,
          rendered,
          message: def.approval.out_of_band
            ? 'this call needs an administrator approval out of band; retry the same call once approved'
            : 'this call needs approval; retry the same call with the same arguments once approved',
        };
      }
      approval = resolved;
    }
    if (idemKey) {
      const claimed = await this.#claimIdempotency(idemKey, argsHash, callId, now);
      const settled = await settle(claimed);
      if (settled) return settled;
    }

    // 6 limits, after approval: a call waiting for a reviewer spends no slot; its approved
    // retry does.
    const budgets: SessionBudgets = agent.budgets;
    if (budgets.egress_bytes !== undefined || budgets.spend_cents !== undefined) {
      session = await this.#freshSession(ctx.sessionId, ctx);
    }
    const spent = checkSpentBudgets(session, budgets);
    if (!spent.ok)
      return refusal(
        'BUDGET_EXCEEDED',
        spent.rule ?? 'budget',
        spent.message ?? 'budget spent',
        ref,
      );
    const rate = await takeRateLimits(
      this.#d.store.db,
      {
        agentId: ctx.agentId,
        toolId: detail.id,
        runId: session.run_id,
        now,
        sessionExpiresAt: session.expires_at,
      },
      def.rate_limit,
    );
    if (!rate.ok)
      return refusal('RATE_LIMITED', rate.rule ?? 'rate', rate.message ?? 'rate limited', ref);

    if (def.action_class === 'external_send') {
      const send = await takeExternalSend(this.#d.store.db, session.id, budgets);
      if (send.ok) {
        this.#updateCachedSession(session.id, (r) => ({
          ...r,
          external_sends: r.external_sends + 1,
        }));
      }
      if (!send.ok)
        return refusal(
          'BUDGET_EXCEEDED',
          send.rule ?? 'budget',
          send.message ?? 'budget spent',
          ref,
        );
    }
    // The call's cost and the agent's rolling ceilings, all charged or none (ceilings.ts); the
    // last limit, so a call refused by another limit is charged nothing. Never refunded.
    const admitted = await admitCall(
      this.#d.store,
      {
        ...who,
        sessionId: session.id,
        toolId: detail.id,
        externalSend: def.action_class === 'external_send',
        cents: cost.cents,
        spendBudget: budgets.spend_cents,
      },
      agent.ceilings,
    );
    if (!admitted.ok) return refusal(admitted.code, admitted.rule, admitted.message, ref);
    if (cost.cents > 0) {
      this.#updateCachedSession(session.id, (r) => ({
        ...r,
        spend_cents: r.spend_cents + cost.cents,
      }));
    }

    // 9 audit-pre: durable before anything runs. (Records are built field by field: spreading
    // optional parts costs more than the rest of the record on this path.)
    const pre: Mutable<AuditRecord> = {
      at: now,
      callId,
      sessionId: session.id,
      runId: session.run_id,
      agentId: ctx.agentId,
      userId: session.user_id,
      kind: 'call.pre',
      toolId: detail.id,
      toolVersion: detail.version,
      argsHash,
      argsRedacted: redactArguments(callArgs),
      decision: 'allow',
      details: warnings.length > 0 ? { warnings } : {},
    };
    if (base.model !== undefined) pre.model = base.model;
    if (approval) {
      pre.approvalId = approval.approvalId;
      pre.approver = approval.approver;
    }
    if (destinations.size > 0) pre.egressHost = [...destinations].join(',');
    await this.#audit.append(pre, callArgs);

    // 10 execute, 11 result
    const result = await this.#execute(def, callArgs, compiled, {
      callId,
      sessionId: session.id,
      agentId: ctx.agentId,
      userId: session.user_id,
      destinations,
      egressLimit: budgets.egress_bytes,
      storedEgressBytes: session.egress_bytes,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      egressCeilingLeft: admitted.egressLeft,
    });
    if (result.egressSpent !== undefined && result.egressSpent > 0) {
      const spentBytes = result.egressSpent;
      await this.#d.store.db
        .updateTable('sessions')
        .set((eb) => ({ egress_bytes: eb('egress_bytes', '+', spentBytes) }))
        .where('id', '=', session.id)
        .execute();
      this.#updateCachedSession(session.id, (r) => ({
        ...r,
        egress_bytes: r.egress_bytes + spentBytes,
      }));
      await chargeEgress(this.#d.store.db, who, agent.ceilings, spentBytes);
    }
    // Only the pre record must be durable before a tool runs (DESIGN.md §1); the result record
    // joins the next group commit without holding the caller. A crash in between leaves a pre
    // record without a result, which is what it then was: outcome unknown.
    const details: Record<string, unknown> = {
      result_hash: result.ok ? safeHash(result.output) : null,
      result_bytes: result.bytes,
    };
    if (result.sandbox) details.sandbox = result.sandbox;
    if (result.egress) {
      details.egress = { bytes_in: result.egress.bytesIn, denials: result.egress.denials };
    }
    if (result.redacted) {
      details.redacted = true;
      details.flagged = 'credential_echoed';
    }
    const post: Mutable<AuditRecord> = {
      at: this.#clock(),
      callId,
      sessionId: session.id,
      runId: session.run_id,
      agentId: ctx.agentId,
      userId: session.user_id,
      kind: 'call.post',
      toolId: detail.id,
      toolVersion: detail.version,
      argsHash,
      argsRedacted: undefined,
      decision: result.ok ? 'allow' : 'deny',
      outcome: result.outcome ?? (result.ok ? 'ok' : result.rule),
      bytesOut: result.egress?.bytesOut ?? 0,
      durationMs: performance.now() - started,
      details,
    };
    if (base.model !== undefined) post.model = base.model;
    if (result.egress?.egressHost) post.egressHost = result.egress.egressHost;
    if (!result.ok) {
      post.code = result.code;
      post.rule = result.rule;
      post.message = result.message;
    }
    this.#audit.append(post, undefined, { deferred: true }).catch(() => {
      // Counted (lostPostRecords), never thrown into a caller whose tool already ran.
      this.#lostPostRecords += 1;
    });
    if (!result.ok) return deny(callId, result.code, result.rule, result.message);
    if (def.data_access === 'private')
      await recordPrivateRead(this.#d.store.db, who, agent.ceilings);
    // The flag only ever goes from 0 to 1: once this gate saw it set, there is nothing to write.
    if (def.data_access === 'private' && session.private_data_read !== 1) {
      await this.#d.store.db
        .updateTable('sessions')
        .set({ private_data_read: 1 })
        .where('id', '=', session.id)
        .execute();
      this.#updateCachedSession(session.id, (r) => ({ ...r, private_data_read: 1 }));
    }
    if (idemKey) {
      await this.#d.store.db
        .updateTable('idempotency')
        .set({ result: JSON.stringify(result.output) })
        .where('key', '=', idemKey)
        .execute();
    }
    return {
      kind: 'allow',
      callId,
      toolId: detail.id,
      version: detail.version,
      output: result.output,
      warnings,
      ...(def.runtime.kind === 'mcp' ? { mcpResult: result.output as McpToolResult } : {}),
    };
  }

  /**
   * The per-session egress budget this process draws on: concurrent calls of one session share
   * it, so together they cannot move more than the ceiling. Other replicas' spending reaches it
   * through the stored counter the next time the session's budget is loaded here.
   */
  #egressBudget(
    sessionId: string,
    limit: number | undefined,
    storedSpent: number,
    ceilingLeft = Number.POSITIVE_INFINITY,
  ): { budget: ByteBudget; spent: () => number } {
    let shared = this.#egressBudgets.get(sessionId);
    if (!shared) {
      shared = createByteBudget(
        limit === undefined ? Number.POSITIVE_INFINITY : Math.max(0, limit - storedSpent),
      );
      if (this.#egressBudgets.size >= SESSION_CACHE_MAX) {
        const oldest = this.#egressBudgets.keys().next();
        if (!oldest.done) this.#egressBudgets.delete(oldest.value);
      }
      this.#egressBudgets.set(sessionId, shared);
    }
    const pool = shared;
    let mine = 0;
    return {
      budget: {
        remaining: () => Math.min(pool.remaining(), Math.max(0, ceilingLeft - mine)),
        consume: (bytes) => {
          mine += bytes;
          pool.consume(bytes);
        },
      },
      spent: () => mine,
    };
  }

  /**
   * Step 10 and 11: the tool's credential (only now, after every check passed), the run in the
   * runtime of its kind (docs/architecture.md §4), then the result: secrets scrubbed, size and
   * output schema checked. Never throws for anything the tool does; a refusal or failure is a
   * result with its code and rule.
   */
  async #execute(
    def: ToolDefinition,
    args: Record<string, unknown>,
    compiled: CompiledTool,
    call: ExecuteCall,
  ): Promise<ExecuteResult> {
    // Withdrawn before it started (during the checks, or while an approval was asked): never run.
    if (call.signal?.aborted) {
      return runtimeFailure(CANCELLED.code, CANCELLED.rule, CANCELLED.message, {
        outcome: 'cancelled',
      });
    }
    let creds: CallCredentials | null = null;
    if (def.credentials) {
      if (!this.#d.credentials) {
        return {
          ok: false,
          code: 'CREDENTIAL_UNAVAILABLE',
          rule: 'credentials.unavailable',
          message: "this gateway cannot provide the tool's credential",
          bytes: 0,
        };
      }
      try {
        creds = await this.#d.credentials.forCall({
          tool: def,
          userId: call.userId,
          agentId: call.agentId,
          sessionId: call.sessionId,
          callId: call.callId,
        });
      } catch (err) {
        if (!isToolgateError(err) || err.code !== 'CREDENTIAL_UNAVAILABLE') throw err;
        // The caller learns that the credential is missing, not which secret or why.
        const reason = (err.details as { reason?: string }).reason ?? 'unavailable';
        return {
          ok: false,
          code: 'CREDENTIAL_UNAVAILABLE',
          rule: `credentials.${reason}`,
          message: "the tool's credential is not available; an administrator has to set it",
          bytes: 0,
        };
      }
    }
    const runtime = this.#d.runtimes[def.runtime.kind];
    if (!runtime) {
      // Never run a tool with less isolation than it asks for: no runtime here, no run.
      return runtimeFailure(
        'EXECUTION_FAILED',
        'runtime.unavailable',
        `the ${def.runtime.kind} runtime is not available on this gateway`,
      );
    }
    const { budget, spent } = this.#egressBudget(
      call.sessionId,
      call.egressLimit,
      call.storedEgressBytes,
      call.egressCeilingLeft,
    );
    const context: Mutable<RuntimeContext> = {
      callId: call.callId,
      sessionId: call.sessionId,
      agentId: call.agentId,
      userId: call.userId,
      credentials: creds,
      budget,
      destinations: call.destinations,
      wallTimeMs: def.sandbox.limits.wall_time_ms,
      validateOutput: compiled.validateOutput,
    };
    if (call.onProgress) context.onProgress = call.onProgress;
    if (call.signal) context.signal = call.signal;
    const ran = await runtime.run(def, args, context);
    if (!ran.ok) return { ...ran, egressSpent: spent() };

    // 11 result: a tool that echoes its credential gets it scrubbed, and the record says so.
    const done: Mutable<ExecuteSuccess> = { ...ran, bytes: 0, egressSpent: spent() };
    if (creds && creds.redact.length > 0) {
      const scrubbed = redactSecrets(done.output, creds.redact);
      done.output = scrubbed.value;
      if (scrubbed.redacted) done.redacted = true;
    }
    done.bytes = Buffer.byteLength(JSON.stringify(done.output ?? null), 'utf8');
    if (done.bytes > def.sandbox.limits.output_bytes) {
      const { output: _tooLarge, ...audit } = done;
      return {
        ...audit,
        ok: false,
        code: 'OUTPUT_INVALID',
        rule: 'result.size',
        message: `the result is over ${def.sandbox.limits.output_bytes} bytes`,
      };
    }
    // An mcp tool's structured content was checked by its runtime (its schema speaks of that).
    if (def.runtime.kind !== 'mcp' && !compiled.validateOutput(done.output)) {
      const { output: _invalid, ...audit } = done;
      return {
        ...audit,
        ok: false,
        code: 'OUTPUT_INVALID',
        rule: 'result.schema',
        message: 'the tool returned a result that does not match its output schema',
      };
    }
    return done;
  }

  /** A finished call under this key (replay), a conflict, or nothing yet (`claimed` = free). */
  async #lookupIdempotency(key: string, argsHash: string): Promise<IdempotencyOutcome> {
    const row = await this.#d.store.db
      .selectFrom('idempotency')
      .selectAll()
      .where('key', '=', key)
      .executeTakeFirst();
    return row && !this.#expired(row) ? judgeIdempotency(row, argsHash) : { kind: 'claimed' };
  }

  /** A key past IDEMPOTENCY_TTL_MS is free again, swept or not. */
  #expired(row: { created_at: string }): boolean {
    return Date.parse(row.created_at) < this.#clock().getTime() - IDEMPOTENCY_TTL_MS;
  }

  async #claimIdempotency(
    key: string,
    argsHash: string,
    callId: string,
    now: Date,
  ): Promise<IdempotencyOutcome> {
    // An expired record under this key (not swept yet) gives way to the new call.
    await this.#d.store.db
      .deleteFrom('idempotency')
      .where('key', '=', key)
      .where('created_at', '<', new Date(now.getTime() - IDEMPOTENCY_TTL_MS).toISOString())
      .execute();
    const inserted = await this.#d.store.db
      .insertInto('idempotency')
      .values({
        key,
        args_hash: argsHash,
        call_id: callId,
        result: null,
        created_at: now.toISOString(),
      })
      .onConflict((oc) => oc.column('key').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return { kind: 'claimed' };
    const row = await this.#d.store.db
      .selectFrom('idempotency')
      .selectAll()
      .where('key', '=', key)
      .executeTakeFirst();
    if (!row) throw new ToolgateError('INTERNAL', 'idempotency record vanished', {});
    return judgeIdempotency(row, argsHash);
  }
}

/** What execution adds to the runtime's result for the audit record and the session's counters. */
interface ExecuteExtra {
  /** Egress bytes this call charged to the session's budget (persisted after the call). */
  readonly egressSpent?: number;
  /** The tool's output held its credential, which was scrubbed. */
  readonly redacted?: boolean;
}

type ExecuteSuccess = RuntimeSuccess & ExecuteExtra & { readonly bytes: number };

/** A runtime's result after the result step, or the gate's own refusal (credential, runtime). */
type ExecuteResult =
  | ExecuteSuccess
  | (Omit<RuntimeFailure, 'code'> & ExecuteExtra & { readonly code: DenyCode });

/** Who and what one execution is for: the credential broker and the egress budget need it. */
interface ExecuteCall {
  readonly callId: string;
  readonly sessionId: string;
  readonly agentId: string;
  readonly userId: string | null;
  /** Hosts this call's URL arguments named, after the URL policy checked them. */
  readonly destinations: ReadonlySet<string>;
  readonly egressLimit: number | undefined;
  readonly storedEgressBytes: number;
  readonly onProgress?: (progress: CallProgress) => void;
  readonly signal?: AbortSignal;
  /** What the agent's egress ceilings have left (ceilings.ts); this call may move no more. */
  readonly egressCeilingLeft?: number | undefined;
}

type IdempotencyOutcome =
  | { kind: 'claimed' }
  | { kind: 'replay'; callId: string; output: unknown }
  | { kind: 'conflict'; rule: string; message: string };

/** What an existing idempotency record means for a call with these arguments. */
function judgeIdempotency(
  row: { args_hash: string; call_id: string; result: string | null },
  argsHash: string,
): Exclude<IdempotencyOutcome, { kind: 'claimed' }> {
  if (row.args_hash !== argsHash) {
    return {
      kind: 'conflict',
      rule: 'idempotency.arguments_differ',
      message: 'this idempotency key was used with other arguments',
    };
  }
  if (row.result === null) {
    return {
      kind: 'conflict',
      rule: 'idempotency.in_progress',
      message: 'a call with this idempotency key is still running or failed; use a new key',
    };
  }
  return { kind: 'replay', callId: row.call_id, output: JSON.parse(row.result) as unknown };
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Each stored session row's tool set, parsed once (rows are replaced, never changed, on update). */
const parsedToolSets = new WeakMap<SessionRow, SessionTool[]>();

function toolSetOf(session: SessionRow): SessionTool[] {
  let set = parsedToolSets.get(session);
  if (!set) {
    set = JSON.parse(session.tool_set) as SessionTool[];
    parsedToolSets.set(session, set);
  }
  return set;
}

/**
 * The call's own copy of its (validated) arguments. Plain JSON values are copied directly, which
 * is several times quicker than structuredClone; anything else (a Date, a Map, a class instance
 * from a library caller) goes through structuredClone as before. An own `__proto__` member stays
 * an own member, never a prototype.
 */
function cloneArguments(args: Record<string, unknown>): Record<string, unknown> {
  const copy = clonePlain(args);
  return copy === NOT_PLAIN
    ? (structuredClone(args) as Record<string, unknown>)
    : (copy as Record<string, unknown>);
}

const NOT_PLAIN = Symbol('not plain JSON');

function clonePlain(value: unknown): unknown {
  if (value === null || typeof value !== 'object') {
    return typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint'
      ? NOT_PLAIN
      : value;
  }
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const v = clonePlain(value[i]);
      if (v === NOT_PLAIN) return NOT_PLAIN;
      out[i] = v;
    }
    return out;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return NOT_PLAIN;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = clonePlain((value as Record<string, unknown>)[key]);
    if (v === NOT_PLAIN) return NOT_PLAIN;
    if (key === '__proto__') {
      Object.defineProperty(out, key, {
        value: v,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      out[key] = v;
    }
  }
  return out;
}

/** Replaces the value at a concrete JSON pointer (as valuesAt returns them) in place. */
function setAt(root: Record<string, unknown>, pointer: string, value: unknown): void {
  const tokens = pointer
    .split('/')
    .slice(1)
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
  const last = tokens.pop();
  if (last === undefined) return;
  let node: unknown = root;
  for (const t of tokens) node = (node as Record<string, unknown>)[t];
  (node as Record<string, unknown>)[last] = value;
}

/** The argument hash of anything, or null when it cannot be represented (never throws). */
function safeHash(value: unknown): string | null {
  try {
    return argumentsHash(value);
  } catch {
    return null;
  }
}
