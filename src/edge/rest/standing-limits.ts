/**
 * @module Bounds on what stands open without doing work: event streams (MCP 2026-07-28
 * `subscriptions/listen`, a 2025-era session's GET stream) and waits (a call waiting for the person
 * at the client). None of them holds a request slot (admission.ts); each is counted here instead,
 * per agent, per user of an agent (its share, as for sessions), per user and overall — never per
 * credential string, so four keys or four tokens of one principal share one bound. A principal at
 * its bound is refused (429 LIMIT_REACHED with Retry-After). Fair eviction, so nobody is shut out
 * by others' standing connections: when an agent's bound is full, a principal of it (a user, or
 * the agent's own keys) holding less than its share and less than the biggest holder of that agent
 * gets a place by closing that holder's oldest entry; when the overall bound is full, the oldest
 * entry of the agent holding the most is closed for the newcomer.
 */
import { type CapDetails, ToolgateError } from '../../core/index.js';

export interface StandingOptions {
  /** Open at once over every principal; past it the biggest holder's oldest is closed. */
  readonly max: number;
  /** Open at once for one agent (all its credentials and users together). */
  readonly maxPerAgent: number;
  /** Open at once for one user (through every agent acting for them). */
  readonly maxPerUser: number;
  /**
   * The share (0 < share ≤ 1) of `maxPerAgent` one principal of an agent — a user, or the agent's
   * own keys — may hold at once (at least one): `--user-session-share`, as for sessions.
   */
  readonly userShare: number;
}

/** Why an entry was closed for someone else, as the log says it. */
export interface Eviction {
  readonly agent: string;
  readonly user: string | undefined;
  readonly reason: 'evicted_for_fairness' | 'evicted_overall_bound';
}

/** Streams: one per MCP session at most over the older protocol, so the session cap's numbers. */
export const DEFAULT_STREAMS: StandingOptions = {
  max: 1_024,
  maxPerAgent: 64,
  maxPerUser: 64,
  userShare: 0.5,
};
/** Waits for the person at a client (a pending approval's prompt). */
export const DEFAULT_WAITS: StandingOptions = {
  max: 1_024,
  maxPerAgent: 32,
  maxPerUser: 16,
  userShare: 0.5,
};

/** What a refused opener is told to wait: standing entries end in seconds to minutes. */
const RETRY_AFTER_S = 5;

interface Entry {
  readonly agent: string;
  readonly user: string | undefined;
  /** Order of entry: the lower, the older. */
  readonly seq: number;
  readonly evict: () => void;
}

export type Standing =
  | { readonly ok: true; readonly close: () => void }
  | { readonly ok: false; readonly error: ToolgateError<'LIMIT_REACHED' | 'SHUTTING_DOWN'> };

export class StandingLimits {
  readonly #kind: 'streams' | 'waits';
  readonly #o: StandingOptions;
  /** Per agent and per user, oldest first (a Set keeps insertion order). */
  readonly #byAgent = new Map<string, Set<Entry>>();
  readonly #byUser = new Map<string, Set<Entry>>();
  /** Per agent, per principal of it (a user id; undefined: the agent's own keys), oldest first. */
  readonly #holders = new Map<string, Map<string | undefined, Set<Entry>>>();
  readonly #share: number;
  readonly #onEvict: (eviction: Eviction) => void;
  #open = 0;
  #seq = 0;
  /** Set by `endAll` (the server is stopping): nothing new stands from then on. */
  #ended = false;

  constructor(
    kind: 'streams' | 'waits',
    options: StandingOptions,
    /** Told of each entry closed for someone else (the server logs it). */
    onEvict: (eviction: Eviction) => void = () => {},
  ) {
    const { userShare, ...counts } = options;
    if (!(userShare > 0 && userShare <= 1)) {
      throw new ToolgateError('INPUT_INVALID', `${kind} userShare must be in (0, 1]`, {
        problems: [],
      });
    }
    for (const [name, value] of Object.entries(counts)) {
      if (!Number.isInteger(value) || value < 1) {
        throw new ToolgateError('INPUT_INVALID', `${kind} ${name} must be a positive integer`, {
          problems: [],
        });
      }
    }
    this.#kind = kind;
    this.#o = options;
    this.#share = Math.max(1, Math.floor(options.maxPerAgent * userShare));
    this.#onEvict = onEvict;
  }

  get open(): number {
    return this.#open;
  }

  /** Open entries of one agent. */
  ofAgent(agentId: string): number {
    return this.#byAgent.get(agentId)?.size ?? 0;
  }

  /**
   * Counts a new standing entry of the principal, or refuses it; `evict` ends it when the overall
   * bound makes room for a newcomer (it must end the stream or wait; `close` is then a no-op).
   * Never throws.
   */
  enter(agentId: string, userId: string | undefined, evict: () => void): Standing {
    if (this.#ended) {
      return {
        ok: false,
        error: new ToolgateError('SHUTTING_DOWN', 'the gateway is stopping', {
          retryAfterSeconds: RETRY_AFTER_S,
        }),
      };
    }
    const mine = this.#holders.get(agentId)?.get(userId)?.size ?? 0;
    if (userId !== undefined && mine >= this.#share)
      return this.#refuse('user', this.#share, " of this agent (a user's share)");
    if (userId !== undefined && (this.#byUser.get(userId)?.size ?? 0) >= this.#o.maxPerUser)
      return this.#refuse('user', this.#o.maxPerUser);
    if (this.ofAgent(agentId) >= this.#o.maxPerAgent) {
      const biggest = mine < this.#share ? this.#biggestHolder(agentId) : undefined;
      const oldest = biggest && biggest.size > mine ? first(biggest) : undefined;
      if (!oldest) return this.#refuse('agent', this.#o.maxPerAgent);
      this.#end(oldest, 'evicted_for_fairness');
    }
    if (this.#open >= this.#o.max) this.#evictOne();
    const entry: Entry = { agent: agentId, user: userId, seq: this.#seq++, evict };
    add(this.#byAgent, agentId, entry);
    if (userId !== undefined) add(this.#byUser, userId, entry);
    let holders = this.#holders.get(agentId);
    if (!holders) {
      holders = new Map();
      this.#holders.set(agentId, holders);
    }
    add(holders, userId, entry);
    this.#open += 1;
    let closed = false;
    return {
      ok: true,
      close: () => {
        if (closed) return;
        closed = true;
        this.#forget(entry);
      },
    };
  }

  /**
   * Ends every entry (the server is stopping): each forgotten, then ended; and refuses every later
   * one (a call that still gets to wait is answered at once instead). Never throws.
   */
  endAll(): void {
    this.#ended = true;
    for (const held of [...this.#byAgent.values()]) {
      for (const entry of [...held]) {
        this.#forget(entry);
        try {
          entry.evict();
        } catch {
          // Ending a connection that already broke: it is gone either way.
        }
      }
    }
  }

  /** The principal of the agent holding the most entries; of equals, the one with the oldest. */
  #biggestHolder(agentId: string): Set<Entry> | undefined {
    let best: Set<Entry> | undefined;
    for (const held of this.#holders.get(agentId)?.values() ?? []) {
      const older = best !== undefined && (first(held)?.seq ?? 0) < (first(best)?.seq ?? 0);
      if (!best || held.size > best.size || (held.size === best.size && older)) best = held;
    }
    return best;
  }

  /** The oldest entry of the agent holding the most (the newcomer's own, when that is it). */
  #evictOne(): void {
    let victim: Entry | undefined;
    let most = 0;
    for (const held of this.#byAgent.values()) {
      if (held.size > most) {
        most = held.size;
        victim = first(held);
      }
    }
    if (victim) this.#end(victim, 'evicted_overall_bound');
  }

  /** Closes an entry for someone else: forgotten first, then ended, then told. */
  #end(victim: Entry, reason: Eviction['reason']): void {
    this.#forget(victim);
    try {
      victim.evict();
    } catch {
      // Ending a connection that already broke: it is gone either way.
    }
    this.#onEvict({ agent: victim.agent, user: victim.user, reason });
  }

  #forget(entry: Entry): void {
    const mine = this.#byAgent.get(entry.agent);
    if (!mine?.delete(entry)) return;
    if (mine.size === 0) this.#byAgent.delete(entry.agent);
    if (entry.user !== undefined) {
      const theirs = this.#byUser.get(entry.user);
      theirs?.delete(entry);
      if (theirs?.size === 0) this.#byUser.delete(entry.user);
    }
    const holders = this.#holders.get(entry.agent);
    const held = holders?.get(entry.user);
    held?.delete(entry);
    if (held?.size === 0) holders?.delete(entry.user);
    if (holders?.size === 0) this.#holders.delete(entry.agent);
    this.#open -= 1;
  }

  #refuse(who: 'agent' | 'user', max: number, of = ''): Standing {
    const limit = `${this.#kind}_per_${who}` as CapDetails['limit'];
    const what = this.#kind === 'streams' ? 'open event streams' : 'calls waiting for a person';
    return {
      ok: false,
      error: new ToolgateError(
        'LIMIT_REACHED',
        `this ${who} has ${max} ${what}${of}, whichever credentials opened them; close one first`,
        { limit, max, retryAfterSeconds: RETRY_AFTER_S },
      ),
    };
  }
}

function first(held: Set<Entry>): Entry | undefined {
  return held.values().next().value;
}

function add<K>(map: Map<K, Set<Entry>>, key: K, entry: Entry): void {
  let set = map.get(key);
  if (!set) {
    set = new Set();
    map.set(key, set);
  }
  set.add(entry);
}
