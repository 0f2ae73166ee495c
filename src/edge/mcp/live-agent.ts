/**
 * @module The agent API as one stdio connection uses it: the connection's credential is proven
 * again before every call it makes, as every HTTP request is authenticated (INVARIANTS: authority
 * is read when it is used). A key revoked, or an agent or user disabled, while the process runs
 * refuses the next request with UNAUTHENTICATED, never a late success or an internal error.
 */
import {
  type AgentApi,
  DISCOVERY_AGENT,
  ENTRIES_AGENT,
  RUNS_AGENT,
  SESSIONS_AGENT,
} from '../../api/index.js';
import { ToolgateError } from '../../core/index.js';

type AsyncFn = (...args: unknown[]) => Promise<unknown>;

export function liveAgentApi(agent: AgentApi, token: string): AgentApi {
  const proven = async (): Promise<void> => {
    if (await agent.authenticate(token)) return;
    throw new ToolgateError('UNAUTHENTICATED', 'the agent key or JWT is no longer valid', {});
  };
  const guarded = <T extends object>(part: T, names: readonly string[]): T => {
    const out: Record<string, unknown> = {};
    for (const name of names) {
      const fn = (part as Record<string, AsyncFn>)[name] as AsyncFn;
      out[name] = async (...args: unknown[]) => {
        await proven();
        return fn.apply(part, args);
      };
    }
    return Object.freeze(out) as T;
  };
  const once = <F extends AsyncFn>(fn: F): F =>
    (async (...args: unknown[]) => {
      await proven();
      return fn(...args);
    }) as F;
  return Object.freeze({
    ...agent,
    sessions: guarded(agent.sessions, SESSIONS_AGENT),
    entries: guarded(agent.entries, ENTRIES_AGENT),
    discovery: guarded(agent.discovery, DISCOVERY_AGENT),
    runs: guarded(agent.runs, RUNS_AGENT),
    invoke: once(agent.invoke as AsyncFn) as AgentApi['invoke'],
    stepUp: once(agent.stepUp as AsyncFn) as AgentApi['stepUp'],
    approvalStatus: once(agent.approvalStatus as AsyncFn) as AgentApi['approvalStatus'],
    awaitApproval: once(agent.awaitApproval as AsyncFn) as AgentApi['awaitApproval'],
    callOutcome: once(agent.callOutcome as AsyncFn) as AgentApi['callOutcome'],
    waitingOnApproval: once(agent.waitingOnApproval as AsyncFn) as AgentApi['waitingOnApproval'],
  });
}
