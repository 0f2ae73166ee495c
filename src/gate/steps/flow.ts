/**
 * @module The `flow` step: after a private-data read in this session, in any session of the same
 * run, or in any session of this agent for this user within the flow window (a fresh session or
 * run id must not launder what was read), nothing may leave through unconstrained egress.
 * Checked before limits, so a refused call spends no budget. Step order: docs/architecture.md §3.
 */
import { type CallState, CONTINUE, type Refusal, type StepResult } from './step.js';

const TOXIC_FLOW: Refusal = {
  kind: 'refuse',
  code: 'TOXIC_FLOW',
  rule: 'flow.private_then_egress',
  message: 'this session has read private data; unconstrained egress is refused',
};

export function flowStep(s: CallState): StepResult | Promise<StepResult> {
  s.who = { agentId: s.ctx.principal.agentId, userId: s.session.user_id, now: s.now };
  if (s.def.egress.mode !== 'unconstrained') return CONTINUE;
  if (s.session.private_data_read === 1) return TOXIC_FLOW;
  return readElsewhere(s);
}

async function readElsewhere(s: CallState): Promise<StepResult> {
  const read =
    (await s.deps.sessions.runHasReadPrivate(s.ctx.principal.agentId, s.session.run_id)) ||
    (await s.deps.counters.readPrivateRecently(s.who, s.agent.ceilings));
  return read ? TOXIC_FLOW : CONTINUE;
}
