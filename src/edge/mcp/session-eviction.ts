/**
 * @module Fair sharing of the MCP front's session slots. When every slot is taken, a newcomer is
 * not refused while someone sits on idle sessions: the least recently used idle session (no
 * request in flight, no call waiting on an approval) of the agent holding the most sessions is
 * evicted; with none idle, the newcomer gets 503 and Retry-After. At one agent's own cap the same
 * choice is made among that agent's principals (pickFairVictim), where waiting on an approval
 * spares a session only within its principal's share, as for gate sessions.
 */

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
 * Pure: at an agent's full cap, the least recently used idle session of the principal of that
 * agent holding the most sessions, when the newcomer's principal holds fewer (as gate sessions do,
 * agent-caps.ts); null when it holds as many or that principal has nothing to yield. A session
 * with a request in flight is never chosen; one waiting on an approval only when its principal
 * holds more than `share` (attack round 13, P1: parked approvals must not lock the agent's other
 * principals out), and then only when none of that principal's is idle. Never mutates.
 */
export function pickFairVictim<K>(
  sessions: Iterable<[K, HolderCandidate]>,
  newcomer: string | null,
  share: number,
): K | null {
  const all = [...sessions];
  const held = new Map<string | null, number>();
  for (const [, c] of all) held.set(c.holder, (held.get(c.holder) ?? 0) + 1);
  const most = Math.max(0, ...held.values());
  if ((held.get(newcomer) ?? 0) >= most) return null;
  const pick = (spareWaiting: boolean): K | null => {
    let best: [K, HolderCandidate] | null = null;
    for (const entry of all) {
      const c = entry[1];
      if (c.inFlight > 0 || (spareWaiting && c.waiting) || held.get(c.holder) !== most) continue;
      if (best === null || c.lastSeen < best[1].lastSeen) best = entry;
    }
    return best === null ? null : best[0];
  };
  return pick(true) ?? (most > share ? pick(false) : null);
}
