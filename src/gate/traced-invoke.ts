/**
 * @module The gate's `invoke` with tracing on (docs/architecture.md §3, the gate's steps): the same
 * steps in the same order as gate.ts runs them, each of TRACED_STEPS in a child span of the call's
 * span, the resolved tool and the verdict as attributes (call-tracer.ts). Kept beside gate.ts so the
 * untraced path stays one loop with one test per call.
 */
import { isToolgateError } from '../core/index.js';
import { isEntryRef } from './call-context.js';
import { type CallTracer, TRACED_STEPS, type TracedVerdict } from './call-tracer.js';
import type { GateDecision } from './decision.js';
import { releaseClaim } from './steps/idempotency-claim.js';
import type { CallState, Refusal, Step, StepResult } from './steps/step.js';

/**
 * `invoke` with tracing on: the call's span under the caller's context, a child span for each
 * of TRACED_STEPS, the resolved tool and the verdict as attributes (call-tracer.ts).
 */
export async function invokeTraced(
  steps: readonly Step[],
  state: CallState,
  tracer: CallTracer,
  refuse: (state: CallState, refusal: Refusal) => Promise<GateDecision>,
): Promise<GateDecision> {
  const ref = state.toolRef;
  const method = !isEntryRef(ref)
    ? 'tools/call'
    : ref.entry === 'resource'
      ? 'resources/read'
      : 'prompts/get';
  const span = tracer.startCall(state.ctx.trace, state.ctx.sessionId, method);
  state.span = span;
  state.traceId = span.traceId;
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
      if (step.name === 'resolve' && result === undefined && state.ref && method === 'tools/call') {
        span.tool({
          name: state.entry?.name ?? state.def.name,
          id: state.ref.id,
          version: state.ref.version,
          actionClass: state.def.action_class,
        });
      }
      if (result === undefined) continue;
      const decision = result.kind === 'refuse' ? await refuse(state, result) : result;
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

/** The gate's verdict as a span records it: the decision, and a denial's code and rule. */
function verdictOf(decision: GateDecision): TracedVerdict {
  if (decision.kind === 'deny') {
    return { decision: 'deny', code: decision.code, rule: decision.rule };
  }
  return { decision: decision.kind };
}
