/**
 * @module Fair sharing of the MCP front's session slots. When every slot is taken, a newcomer is
 * not refused while someone sits on idle sessions: the least recently used idle session (no
 * request in flight, no call waiting on an approval) of the agent holding the most sessions is
 * evicted; with none idle, the newcomer gets 503 and Retry-After. At one agent's own cap the same
 * choice is made among that agent's principals (pickFairVictim), where waiting on an approval
 * spares a session only within its principal's share, as for gate sessions.
 */
import { chooseFairVictim } from '../../core/index.js';

export interface EvictionCandidate {
  readonly agentId: string;
  readonly lastSeen: number;
  /** Requests of this session being answered now (POSTs; a standing event stream is not one). */
  readonly inFlight: number;
  /** A call of its gate session waits on an approval (pending, or approved and not retried). */
  readonly waiting?: boolean;
}

/** Pure: the id of the session to evict, or null when no session is idle. Never mutates. */
export function pickVictim<K>(sessions: Iterable<[K, EvictionCandidate]>): K | null {
  const held = new Map<string, number>();
  const idle: [K, EvictionCandidate][] = [];
  for (const entry of sessions) {
    held.set(entry[1].agentId, (held.get(entry[1].agentId) ?? 0) + 1);
    if (entry[1].inFlight === 0 && !entry[1].waiting) idle.push(entry);
  }
  let best: [K, EvictionCandidate] | null = null;
  for (const entry of idle) {
    if (best === null) {
      best = entry;
      continue;
    }
    const mine = held.get(entry[1].agentId) ?? 0;
    const theirs = held.get(best[1].agentId) ?? 0;
    // The agent holding the most loses first; within it (or a tie), the longest unused session.
    if (mine > theirs || (mine === theirs && entry[1].lastSeen < best[1].lastSeen)) best = entry;
  }
  return best === null ? null : best[0];
}

/** One MCP session of an agent at its own cap, as fair eviction sees it. */
export interface HolderCandidate {
  /** Its principal within the agent: the token user, or null for the agent's own keys. */
  readonly holder: string | null;
  readonly lastSeen: number;
  readonly inFlight: number;
  /** A call of its gate session waits on an approval: spared as gate sessions are (agent-caps.ts). */
  readonly waiting?: boolean;
}

/**
 * Pure: at an agent's full cap, the MCP session to end for a newcomer of principal `newcomer`,
 * chosen as for gate sessions (core's chooseFairVictim): a principal holding more than the
 * newcomer's yields its least recently used idle session, the biggest holder first and the next
 * when the biggest has nothing to yield; a session with a request in flight never, one waiting on
 * an approval only past its principal's `share`. Null when none may be ended. Never mutates.
 */
export function pickFairVictim(
  sessions: Iterable<[string, HolderCandidate]>,
  newcomer: string | null,
  share: number,
): string | null {
  return chooseFairVictim(
    [...sessions].map(([key, c]) => ({
      key,
      holder: c.holder,
      used: c.lastSeen,
      busy: c.inFlight > 0,
      waiting: c.waiting === true,
    })),
    newcomer,
    share,
  );
}
