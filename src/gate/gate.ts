/**
 * @module The gate: the one pipeline every front calls. It runs the declared list of steps
 * (steps/pipeline.ts, docs/architecture.md §3) over one call's state; a step refuses, ends the
 * call with a decision, or lets it go on. Every refusal is audited here and answered with a code,
 * the rule that fired and a message that names nothing outside the caller's own tool set. The
 * steps write the other records (pending, replayed, pre, post) where they happen.
 */

import {
  type AgentPrincipal,
  type Clock,
  isToolgateError,
  systemClock,
  timeOrderedId,
} from '../core/index.js';
import type { CatalogService, HealthGate } from '../domain/catalog/index.js';
import type { CredentialBroker } from '../domain/credentials/index.js';
import type { ApprovalDesk } from '../domain/decisions/index.js';
import type { IdempotencyStore } from '../domain/idempotency/index.js';
import type {
  AgentService,
  OAuthResourceServerConfig,
  UserService,
} from '../domain/identity/index.js';
import type { CallCounters } from '../domain/limits/index.js';
import type { DirectoryReader, PolicySupplier, SetMembership } from '../domain/policy/index.js';
import type { GovernedUris, SessionService } from '../domain/sessions/index.js';
import type { RuntimeRegistry } from '../execution/runtimes/index.js';
import { declaredKeys, deniedRecord } from './audit-records.js';
import type { AuditWriter } from './audit-writer.js';
import {
  type CallContext,
  type CallOptions,
  callContextOf,
  type InProcessCall,
  isEntryRef,
} from './call-context.js';
import { type CallTracer, TRACED_STEPS, type TracedVerdict } from './call-tracer.js';
import { deny, type GateDecision } from './decision.js';
import { directoryReader } from './directory-reader.js';
import { IdentityCache } from './identity-cache.js';
import { attemptedName } from './redaction.js';
import { type Revisions, RevisionWatch } from './revision-watch.js';
import { runningOf } from './running-calls.js';
import { type AfterInjection, DEFAULT_AFTER_INJECTION } from './steps/after-injection.js';
import { releaseClaim } from './steps/idempotency-claim.js';
import { GATE_STEPS } from './steps/pipeline.js';
import { scopeRefusal } from './steps/scope.js';
import {
  CallState,
  type Refusal,
  type Step,
  type StepDependencies,
  type StepResult,
} from './steps/step.js';
import { ToolCache } from './tool-cache.js';

export interface GateDependencies {
  readonly catalog: CatalogService;
  readonly agents: AgentService;
  readonly users: UserService;
  readonly sessions: SessionService;
  readonly approvals: ApprovalDesk;
  /**
   * One runtime per kind (docs/architecture.md §4); a tool whose kind has none here is refused,
   * never run with less isolation than it asks for.
   */
  readonly runtimes: RuntimeRegistry;
  /** Opens a tool's own credential for one call, after the gate passed. */
  readonly credentials?: Pick<CredentialBroker, 'forCall'>;
  /** Loads the org policy engine; called again after every catalog or policy change. */
  readonly policies?: PolicySupplier;
  readonly clock?: Clock;
  /** The chained audit log's writer (shared with the checkpointer). */
  readonly audit: AuditWriter;
  /** Rate slots, external sends, spend and rolling ceilings, private-read marks. */
  readonly counters: CallCounters;
  /** Idempotency records: lookup, claim, stored result, sweep. */
  readonly idempotency: IdempotencyStore;
  /** The stored catalog and identity revisions: how other processes' changes reach this gate. */
  readonly revisions: () => Promise<Revisions>;
  /**
   * What waits for a reviewer once injection text entered a session (steps/after-injection.ts);
   * default: every state-changing call.
   */
  readonly afterInjection?: AfterInjection;
  /** Live destination sets a tool's destinations rules may name (the policy step asks them). */
  readonly destinationSets?: SetMembership;
  /** The health monitor (C14): unavailable tools fail fast, live outcomes feed passive health. */
  readonly health?: HealthGate;
  /**
   * What a resource URI names over every provider (policy step): a template's read must name
   * that template. None: every template read is refused (fail closed).
   */
  readonly governedUris?: Pick<GovernedUris, 'resolve'>;
  /** The steps to run, in order; GATE_STEPS unless a test watches them run. */
  readonly steps?: readonly Step[];
  /** The OAuth resource server's scopes (scope step); none: toolgate takes no access tokens. */
  readonly oauth?: Pick<OAuthResourceServerConfig, 'scopes'>;
  /**
   * Records a refusal that has no session of the caller to be audited in (a step-up asked before
   * any session or run was named) as a security event of the principal.
   */
  readonly principalEvents?: (
    action: string,
    subject: string,
    details: Record<string, unknown>,
  ) => Promise<void>;
  /** Traces calls (call-tracer.ts); none: tracing is off and costs one test per call. */
  readonly tracer?: CallTracer;
}

/** The services the steps use, with fresh caches: one set per gate (and per step test). */
export function stepDependencies(
  deps: GateDependencies,
  lostPostRecord: () => void,
): StepDependencies {
  return {
    sessions: deps.sessions,
    approvals: deps.approvals,
    runtimes: deps.runtimes,
    credentials: deps.credentials,
    clock: deps.clock ?? systemClock,
    audit: deps.audit,
    counters: deps.counters,
    idempotency: deps.idempotency,
    tools: new ToolCache(deps.catalog, deps.policies),
    identities: new IdentityCache(deps.agents, deps.users, deps.sessions),
    destinationSets: deps.destinationSets,
    lostPostRecord,
    afterInjection: deps.afterInjection ?? DEFAULT_AFTER_INJECTION,
    health: deps.health ?? NO_HEALTH,
    governedUris: deps.governedUris,
    scopes: deps.oauth ? { config: deps.oauth, catalog: deps.catalog } : undefined,
  };
}

/** Without a monitor every tool is admitted and nothing is observed. */
const NO_HEALTH: HealthGate = Object.freeze({
  admit: () => null,
  observe: () => {},
});

export class Gate {
  readonly #steps: readonly Step[];
  readonly #deps: StepDependencies;
  readonly #watch: RevisionWatch;
  readonly #clock: Clock;
  readonly #counters: CallCounters;
  readonly #idempotency: IdempotencyStore;
  readonly #audit: AuditWriter;
  #lostPostRecords = 0;
  readonly #catalog: CatalogService;
  readonly #principalEvents: GateDependencies['principalEvents'];
  readonly #tracer: CallTracer | undefined;

  constructor(deps: GateDependencies) {
    this.#steps = deps.steps ?? GATE_STEPS;
    this.#clock = deps.clock ?? systemClock;
    this.#counters = deps.counters;
    this.#idempotency = deps.idempotency;
    this.#audit = deps.audit;
    this.#catalog = deps.catalog;
    this.#principalEvents = deps.principalEvents;
    this.#tracer = deps.tracer;
    this.#deps = stepDependencies(deps, () => {
      // Counted (lostPostRecords), never thrown into a caller whose tool already ran.
      this.#lostPostRecords += 1;
    });
    this.#watch = new RevisionWatch(deps.revisions, this.#deps.tools, this.#deps.identities);
    // Changes made in this process reach the gate at once; other processes within the
    // revision check (revision-watch.ts).
    deps.catalog.onCommit(() => this.#watch.catalogChanged());
  }

  /** Waits until every audit record queued so far is committed; call before closing the store. */
  async flush(): Promise<void> {
    await this.#audit.flush();
  }

  /** The gateway stops: calls whose tool runs now are recorded interrupted (running-calls.ts). */
  interrupt(): Promise<number> {
    return runningOf(this.#deps).stop();
  }

  /**
   * Housekeeping for a running gateway: expired rate and ceiling counters are removed, and
   * idempotency keys older than IDEMPOTENCY_TTL_MS (a retry after that runs as a new call).
   * Returns how many of each.
   */
  async sweep(): Promise<Record<'rateCounters' | 'idempotencyKeys' | 'ceilingCounters', number>> {
    const now = this.#clock();
    const { rateCounters, ceilingCounters } = await this.#counters.sweep(now);
    const idempotencyKeys = await this.#idempotency.sweep(now);
    return { rateCounters, idempotencyKeys, ceilingCounters };
  }

  /**
   * Calls a live destination set's directory tool as toolgate itself (directory-reader.ts); the
   * destination sets are given this at wiring (toolgate.ts).
   */
  directoryReader(): DirectoryReader {
    return directoryReader(this.#deps, this.#catalog);
  }

  /** Result records that could not be written (their pre records exist). */
  get lostPostRecords(): number {
    return this.#lostPostRecords;
  }

  /**
   * Runs one call through every step. Returns a decision for anything the caller sends; throws
   * only SESSION_NOT_FOUND (no valid session: nothing to decide for) and store failures.
   */
  async invoke(
    call: CallContext | InProcessCall,
    toolRef: unknown,
    args: unknown,
    options: CallOptions = {},
  ): Promise<GateDecision> {
    const callId = timeOrderedId('call_');
    const started = performance.now();
    const refreshed = this.#watch.refresh();
    if (refreshed) await refreshed;
    const ctx = callContextOf(call);
    const state = new CallState(this.#deps, ctx, toolRef, args, options, callId, started);
    if (this.#tracer !== undefined) return this.#traced(state, this.#tracer);
    // The caller's trace id reaches the audit records even when this gateway does not trace.
    if (ctx.trace?.parent) state.traceId = ctx.trace.parent.traceId;
    const steps = this.#steps;
    try {
      for (let i = 0; i < steps.length; i++) {
        // A synchronous step is not awaited: most checks decide without I/O.
        let result = (steps[i] as Step).run(state);
        if (result instanceof Promise) result = await result;
        if (result === undefined) continue;
        return result.kind === 'refuse' ? await this.#refuse(state, result) : result;
      }
    } catch (err) {
      // A store error before the tool started: nothing ran, so the key this call took is given
      // back (best effort; the error that ended the call is the one answered).
      if (!state.runStarted) await releaseClaim(state).catch(() => {});
      throw err;
    }
    // The last step always answers; a list that ends without one is a broken list.
    throw new Error('the gate ran out of steps without a decision');
  }

  /**
   * `invoke` with tracing on: the call's span under the caller's context, a child span for each
   * of TRACED_STEPS, the resolved tool and the verdict as attributes (call-tracer.ts).
   */
  async #traced(state: CallState, tracer: CallTracer): Promise<GateDecision> {
    const ref = state.toolRef;
    const method = !isEntryRef(ref)
      ? 'tools/call'
      : ref.entry === 'resource'
        ? 'resources/read'
        : 'prompts/get';
    const span = tracer.startCall(state.ctx.trace, state.ctx.sessionId, method);
    state.span = span;
    state.traceId = span.traceId;
    const steps = this.#steps;
    try {
      for (let i = 0; i < steps.length; i++) {
        const step = steps[i] as Step;
        const child = TRACED_STEPS.has(step.name) ? span.step(step.name) : null;
        state.stepSpan = child;
        let result: StepResult | Promise<StepResult>;
        try {
          result = step.run(state);
          if (result instanceof Promise) result = await result;
        } catch (err) {
          child?.end('error');
          throw err;
        }
        child?.end();
        if (
          step.name === 'resolve' &&
          result === undefined &&
          state.ref &&
          method === 'tools/call'
        ) {
          span.tool({
            name: state.entry?.name ?? state.def.name,
            id: state.ref.id,
            version: state.ref.version,
            actionClass: state.def.action_class,
          });
        }
        if (result === undefined) continue;
        const decision = result.kind === 'refuse' ? await this.#refuse(state, result) : result;
        span.end(verdictOf(decision));
        return decision;
      }
    } catch (err) {
      if (!state.runStarted) await releaseClaim(state).catch(() => {});
      span.end(null, isToolgateError(err) ? err.code : 'error');
      throw err;
    }
    span.end(null, 'error');
    throw new Error('the gate ran out of steps without a decision');
  }

  /**
   * The steps up to `scope`, for a front that must answer a step-up before it hands the request
   * on (MCP over HTTP answers it at the HTTP level, 403 with its challenge, before its SDK
   * dispatches the call): in the caller's own session the name is resolved as `invoke` resolves
   * it, and a refusal before `scope` is left to `invoke`. A scope refusal is audited here like any
   * other: `call.denied` in that session; with no session, or one not the caller's (that attempt is
   * audited by the session check), the offered tool of that name or id decides, and the refusal is
   * a `call.step_up_refused` event of the principal naming the tool and the scopes asked for.
   * Returns the refusal, or null when the call may go on (into `invoke`, which runs the steps again).
   */
  async stepUp(
    call: { readonly principal: AgentPrincipal; readonly sessionId?: string | undefined },
    toolRef: unknown,
    args: unknown,
    via: string,
  ): Promise<Refusal | null> {
    // Grants and the catalog as they are now (within the revision check), as for `invoke`.
    const refreshed = this.#watch.refresh();
    if (refreshed) await refreshed;
    const { principal, sessionId } = call;
    if (sessionId !== undefined) {
      // In the caller's own session: the steps up to `scope`, as `invoke` runs them, so the tool
      // is the one the session lists under that name (a refusal before `scope` is left to `invoke`).
      const ctx = { principal, sessionId };
      const id = timeOrderedId('call_');
      const state = new CallState(this.#deps, ctx, toolRef, args, {}, id, performance.now());
      try {
        for (const step of GATE_STEPS) {
          const result = await step.run(state);
          if (step.name === 'scope') {
            if (result === undefined) return null;
            await this.#refuse(state, result as Refusal);
            return result as Refusal;
          }
          if (result !== undefined) return null;
        }
      } catch (err) {
        if (!isToolgateError(err) || err.code !== 'SESSION_NOT_FOUND') throw err;
      }
    }
    const refusal = await scopeRefusal(this.#deps, call.principal, toolRef);
    if (refusal === undefined) return null;
    await this.#principalEvents?.('call.step_up_refused', `agent:${principal.agentId}`, {
      credential: principal.credential ?? null,
      user: principal.user?.id ?? null,
      session: sessionId ?? null,
      tool: attemptedName(toolRef),
      scope: (refusal.details as { scope: string }).scope,
      via,
    });
    return refusal;
  }

  /**
   * A step's refusal: audited as `call.denied` (durable), then answered as a denial. A refusal
   * after the idempotency claim (the limits step) gives the key back first: a key is held only by
   * a call that runs (docs/architecture.md §3).
   */
  async #refuse(state: CallState, refusal: Refusal): Promise<GateDecision> {
    await releaseClaim(state);
    await this.#audit.append(deniedRecord(state, refusal), state.args, {
      declared: declaredKeys(state, refusal.anonymous),
    });
    return deny(state.callId, refusal.code, refusal.rule, refusal.message, refusal.details);
  }
}

/** The gate's verdict as a span records it: the decision, and a denial's code and rule. */
function verdictOf(decision: GateDecision): TracedVerdict {
  if (decision.kind === 'deny') {
    return { decision: 'deny', code: decision.code, rule: decision.rule };
  }
  return { decision: decision.kind };
}
