/**
 * @module The `limits` step: the session's spent budgets, the tool's rate limits, the session's
 * external sends, then the call's cost and the agent's rolling ceilings, all charged or none
 * (ceilings.ts). Checked before asking, charged after approval: the approval step runs the same
 * statements in a transaction it rolls back (limitsWouldRefuse) before a call waits for a person,
 * and only this step charges, so a waiting call spends no slot (its approved retry does); the
 * ceilings last, so a call refused by another limit is charged nothing. Never refunded. Step
 * order: docs/architecture.md §3.
 */
import {
  type CallCounters,
  checkSpentBudgets,
  effectiveWindows,
} from '../../domain/limits/index.js';
import { type CallState, CONTINUE, refuse, type StepResult } from './step.js';

export async function limitsStep(s: CallState): Promise<StepResult> {
  await prepareLimits(s);
  return chargeLimits(s, s.deps.counters, true);
}

/**
 * Whether the limits would refuse this call now, charging nothing: the approval step asks before
 * a call waits for a person, so a call a budget, rate limit or ceiling would refuse is refused
 * first (and an approved retry the limits would refuse keeps its approval). The charge itself
 * stays after approval (limitsStep).
 */
export async function limitsWouldRefuse(s: CallState): Promise<StepResult | null> {
  await prepareLimits(s);
  const verdict = await s.deps.counters.dryRun((counters) => chargeLimits(s, counters, false));
  return verdict === CONTINUE ? null : verdict;
}

/** The agent's budgets and ceilings, and the session as stored when a budget reads it. */
async function prepareLimits(s: CallState): Promise<void> {
  const budgets = s.agent.budgets;
  s.budgets = budgets;
  // No new session or run starts a fresh allowance: without windows of its own, an agent gets
  // the default day ceilings per (agent, user) (limits/ceilings.ts).
  s.ceilings = { ...s.agent.ceilings, windows: effectiveWindows(s.agent.ceilings, budgets) };
  if (budgets.egress_bytes !== undefined || budgets.spend_cents !== undefined) {
    s.session = await s.deps.identities.freshSession(s.ctx.sessionId, s.ctx.principal, s.session);
  }
}

/**
 * The limits in order, through `counters` only (in a dry run, its transaction); `commit` false:
 * a dry run, nothing noted on the session or the call.
 */
async function chargeLimits(
  s: CallState,
  counters: CallCounters,
  commit: boolean,
): Promise<StepResult> {
  const { identities } = s.deps;
  const def = s.def;
  const budgets = s.budgets;
  const session = s.session;
  const spent = checkSpentBudgets(session, budgets);
  if (!spent.ok) {
    return refuse('BUDGET_EXCEEDED', spent.rule ?? 'budget', spent.message ?? 'budget spent');
  }
  const rate = await counters.takeRateLimits(
    {
      agentId: s.ctx.principal.agentId,
      userId: session.user_id,
      toolId: s.detail.id,
      runId: session.run_id,
      now: s.now,
      sessionExpiresAt: session.expires_at,
    },
    def.rate_limit,
  );
  if (!rate.ok) return refuse('RATE_LIMITED', rate.rule ?? 'rate', rate.message ?? 'rate limited');
  const externalSend = def.action_class === 'external_send';
  if (externalSend) {
    const send = await counters.takeExternalSend(session.id, budgets);
    if (!send.ok) {
      return refuse('BUDGET_EXCEEDED', send.rule ?? 'budget', send.message ?? 'budget spent');
    }
    if (commit) identities.addToSession(session.id, 'external_sends', 1);
  }
  const admitted = await counters.admitCall(
    {
      ...s.who,
      sessionId: session.id,
      toolId: s.detail.id,
      externalSend,
      cents: s.cents,
      spendBudget: budgets.spend_cents,
    },
    s.ceilings,
  );
  if (!admitted.ok) return refuse(admitted.code, admitted.rule, admitted.message);
  if (!commit) return CONTINUE;
  s.egressLeft = admitted.egressLeft;
  if (s.cents > 0) identities.addToSession(session.id, 'spend_cents', s.cents);
  return CONTINUE;
}
