/**
 * @module The choice fair eviction makes when an agent's sessions are all taken (docs/operations.md,
 * "Limits and overload"), pure so the gate's sessions and the MCP 2025 front's own count choose
 * alike: a newcomer's principal holding fewer sessions than another principal of the agent ends
 * one of that principal's sessions.
 */

/** One open session of an agent, as fair eviction sees it. */
export interface FairCandidate<K> {
  readonly key: K;
  /** Its principal within the agent: the token user's id, or null for the agent's own keys. */
  readonly holder: string | null;
  /** When it was last used (an ISO time or milliseconds): the older is ended first. */
  readonly used: string | number;
  /** A call or request of it is running: never ended. */
  readonly busy: boolean;
  /** A call of it waits on a person's approval (pending, or approved and not yet retried). */
  readonly waiting: boolean;
}

/**
 * The session to end for a newcomer of principal `newcomer`, or null (the newcomer is refused).
 * Only a principal holding more sessions than the newcomer's yields, the biggest first: of the
 * principals holding the most, their least recently used session that is not busy and not
 * waiting; else, when they hold more than `share`, their least recently used waiting one (its
 * approvals are withdrawn). When those holders have nothing to yield — their sessions all busy, or
 * all waiting within their share — the next biggest principals are asked the same way (attack
 * round 14, Q1: one principal at its share of waiting sessions must not switch fair eviction off
 * for everyone else). Of equal times, the lowest key: every replica makes the same choice.
 */
export function chooseFairVictim<K extends string>(
  candidates: readonly FairCandidate<K>[],
  newcomer: string | null,
  share: number,
): K | null {
  const held = new Map<string | null, number>();
  for (const c of candidates) held.set(c.holder, (held.get(c.holder) ?? 0) + 1);
  const mine = held.get(newcomer) ?? 0;
  const levels = [...new Set(held.values())].filter((n) => n > mine).sort((a, b) => b - a);
  for (const level of levels) {
    const pool = candidates.filter((c) => !c.busy && held.get(c.holder) === level);
    const victim =
      oldest(pool.filter((c) => !c.waiting)) ??
      (level > share ? oldest(pool.filter((c) => c.waiting)) : null);
    if (victim !== null) return victim;
  }
  return null;
}

function oldest<K extends string>(pool: readonly FairCandidate<K>[]): K | null {
  let best: FairCandidate<K> | null = null;
  for (const c of pool) {
    if (best === null || c.used < best.used || (c.used === best.used && c.key < best.key)) best = c;
  }
  return best === null ? null : best.key;
}
