/**
 * @module Fair sharing of the MCP front's global session slots. When every slot is
 * taken, a newcomer is not refused while someone sits on idle sessions: the least recently used
 * idle session (no request in flight) of the agent holding the most sessions is evicted. A session
 * with a request in flight is never chosen; with none idle, the newcomer gets 503 and Retry-After.
 */

export interface EvictionCandidate {
  readonly agentId: string;
  readonly lastSeen: number;
  /** Requests of this session being answered now (POSTs; a standing event stream is not one). */
  readonly inFlight: number;
}

/** Pure: the id of the session to evict, or null when no session is idle. Never mutates. */
export function pickVictim<K>(sessions: Iterable<[K, EvictionCandidate]>): K | null {
  const held = new Map<string, number>();
  const idle: [K, EvictionCandidate][] = [];
  for (const entry of sessions) {
    held.set(entry[1].agentId, (held.get(entry[1].agentId) ?? 0) + 1);
    if (entry[1].inFlight === 0) idle.push(entry);
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
