/**
 * @module The `grant` step: the session's capabilities, live — a grant revoked or a user disabled
 * after the session opened stops the next call — must cover what the tool requires. One read of
 * the agent serves grants, budgets and the policy request. Step order: docs/architecture.md §3.
 */
import type { AgentView } from '../../domain/identity/index.js';
import { sessionPermissions, tokenCapabilities } from '../../domain/sessions/index.js';
import { type CallState, CONTINUE, refuse, type StepResult } from './step.js';

export async function grantStep(s: CallState): Promise<StepResult> {
  const agent = await s.deps.identities.agent(s.ctx.principal.agentId);
  s.agent = agent;
  const caps = await liveCapabilities(s, agent);
  for (const c of s.def.required_capabilities) {
    if (!caps.has(c)) {
      return refuse(
        'GRANT_MISSING',
        'grant.capability',
        `this session may not use ${s.detail.name}`,
      );
    }
  }
  return CONTINUE;
}

/**
 * The session's capabilities now: the agent's grants narrowed by its user's permissions — an
 * OAuth user's are this request's token's, never the one that opened the session (token-scopes.ts).
 */
export function liveCapabilities(s: CallState, agent: AgentView): Promise<Set<string>> {
  const { identities, sessions } = s.deps;
  const session = s.session;
  const token = tokenCapabilities(s.ctx.principal);
  return sessions.capabilities(
    s.ctx.principal.agentId,
    session.user_id,
    sessionPermissions(session, token, sessions.oauthCeiling(agent.capabilities)),
    agent,
    identities.loadUser,
    identities.isDisabled,
  );
}
