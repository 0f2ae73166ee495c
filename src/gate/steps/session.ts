/**
 * @module The `session` step: the caller's own open session (SESSION_NOT_FOUND is thrown: there is
 * nothing to decide for), the time the call is decided at, and the fields its audit records
 * share. A session suspended after a security alert takes no more calls.
 * Step order: docs/architecture.md §3.
 */
import { type CallState, CONTINUE, type Refusal, type StepResult } from './step.js';

const SUSPENDED: Refusal = {
  kind: 'refuse',
  code: 'SESSION_SUSPENDED',
  rule: 'session.suspended',
  message: 'this session was suspended after a security alert; open a new session',
};

export async function sessionStep(s: CallState): Promise<StepResult> {
  const session = await s.deps.identities.session(s.ctx.sessionId, s.ctx.principal);
  s.session = session;
  const now = s.deps.clock();
  s.now = now;
  s.base = {
    at: now,
    callId: s.callId,
    sessionId: session.id,
    runId: session.run_id,
    agentId: s.ctx.principal.agentId,
    userId: session.user_id,
    traceId: s.traceId,
    ...(s.ctx.model !== undefined ? { model: s.ctx.model.slice(0, 200) } : {}),
  };
  return session.suspended === 1 ? SUSPENDED : CONTINUE;
}
