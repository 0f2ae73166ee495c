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
import type { CatalogService } from '../domain/catalog/index.js';
import type { IdempotencyStore } from '../domain/idempotency/index.js';
import type { CallCounters } from '../domain/limits/index.js';
import type { DirectoryReader } from '../domain/policy/index.js';
import { declaredKeys, deniedRecord } from './audit-records.js';
import type { AuditWriter } from './audit-writer.js';
import {
  type CallContext,
  type CallOptions,
  callContextOf,
  type InProcessCall,
} from './call-context.js';
import type { CallTracer } from './call-tracer.js';
import { deny, type GateDecision } from './decision.js';
import { directoryReader } from './directory-reader.js';
import { type GateDependencies, stepDependencies } from './gate-dependencies.js';
import { PreviewRunner } from './preview-runner.js';
import { attemptedName } from './redaction.js';
import { RevisionWatch } from './revision-watch.js';
import { runningOf } from './running-calls.js';
import { releaseClaim } from './steps/idempotency-claim.js';
import { GATE_STEPS } from './steps/pipeline.js';
import { scopeRefusal } from './steps/scope.js';
import { CallState, type Refusal, type Step, type StepDependencies } from './steps/step.js';
import { invokeTraced } from './traced-invoke.js';

export type { GateDependencies } from './gate-dependencies.js';
export { stepDependencies } from './gate-dependencies.js';

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
  readonly #previews: PreviewRunner;

  constructor(deps: GateDependencies) {
    this.#steps = deps.steps ?? GATE_STEPS;
    this.#clock = deps.clock ?? systemClock;
    this.#counters = deps.counters;
    this.#idempotency = deps.idempotency;
    this.#audit = deps.audit;
    this.#catalog = deps.catalog;
    this.#principalEvents = deps.principalEvents;
    this.#tracer = deps.tracer;
    // Previews run as calls through this very gate (preview-runner.ts), so every rule applies.
    this.#previews = new PreviewRunner(
      (ctx, tool, args, options) => this.invoke(ctx, tool, args, options),
      deps.approvals,
    );
    this.#deps = stepDependencies(
      deps,
      () => {
        // Counted (lostPostRecords), never thrown into a caller whose tool already ran.
        this.#lostPostRecords += 1;
      },
      this.#previews,
    );
    this.#watch = new RevisionWatch(
      deps.revisions,
      this.#deps.tools,
      this.#deps.identities,
      deps.revisionSignal ?? null,
      deps.catalogFollowers ?? [],
    );
    // Changes made in this process reach the gate at once; other processes' when the fleet's
    // notification arrives, or within the revision check (revision-watch.ts).
    deps.catalog.onCommit(() => this.#watch.catalogChanged());
  }

  /** Waits until every audit record queued so far is committed; call before closing the store. */
  async flush(): Promise<void> {
    await this.#previews.settled();
    await this.#audit.flush();
  }

  /** Resolves when every reviewer's preview started so far has attached its outcome. */
  previewsSettled(): Promise<void> {
    return this.#previews.settled();
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
    if (this.#tracer !== undefined) {
      return invokeTraced(this.#steps, state, this.#tracer, (st, r) => this.#refuse(st, r));
    }
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
