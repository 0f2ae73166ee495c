/**
 * @module Bounds on what stands open without doing work: event streams (MCP 2026-07-28
 * `subscriptions/listen`, a 2025-era session's GET stream) and waits (a call waiting for the person
 * at the client). None of them holds a request slot (admission.ts); each is counted here instead,
 * per agent and per user — never per credential string, so four keys or four tokens of one
 * principal share one bound — and overall. An agent or user at its bound is refused (429
 * LIMIT_REACHED with Retry-After); when the overall bound is full, the oldest entry of the agent
 * holding the most is closed for the newcomer (fair eviction), so nobody is shut out by others'
 * standing connections.
 */
import { type CapDetails, ToolgateError } from '../../core/index.js';

export interface StandingOptions {
  /** Open at once over every principal; past it the biggest holder's oldest is closed. */
  readonly max: number;
  /** Open at once for one agent (all its credentials and users together). */
  readonly maxPerAgent: number;
  /** Open at once for one user (through every agent acting for them). */
  readonly maxPerUser: number;
}

/** Streams: one per MCP session at most over the older protocol, so the session cap's numbers. */
export const DEFAULT_STREAMS: StandingOptions = { max: 1_024, maxPerAgent: 64, maxPerUser: 64 };
/** Waits for the person at a client (a pending approval's prompt). */
export const DEFAULT_WAITS: StandingOptions = { max: 1_024, maxPerAgent: 32, maxPerUser: 16 };

/** What a refused opener is told to wait: standing entries end in seconds to minutes. */
const RETRY_AFTER_S = 5;

interface Entry {
  readonly agent: string;
  readonly user: string | undefined;
  readonly evict: () => void;
}

export type Standing =
  | { readonly ok: true; readonly close: () => void }
  | { readonly ok: false; readonly error: ToolgateError<'LIMIT_REACHED'> };

export class StandingLimits {
  readonly #kind: 'streams' | 'waits';
  readonly #o: StandingOptions;
  /** Per agent and per user, oldest first (a Set keeps insertion order). */
  readonly #byAgent = new Map<string, Set<Entry>>();
  readonly #byUser = new Map<string, Set<Entry>>();
  #open = 0;

  constructor(kind: 'streams' | 'waits', options: StandingOptions) {
    for (const [name, value] of Object.entries(options)) {
      if (!Number.isInteger(value) || value < 1) {
        throw new ToolgateError('INPUT_INVALID', `${kind} ${name} must be a positive integer`, {
          problems: [],
        });
      }
    }
    this.#kind = kind;
    this.#o = options;
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
    if (this.ofAgent(agentId) >= this.#o.maxPerAgent)
      return this.#refuse('agent', this.#o.maxPerAgent);
    if (userId !== undefined && (this.#byUser.get(userId)?.size ?? 0) >= this.#o.maxPerUser)
      return this.#refuse('user', this.#o.maxPerUser);
    if (this.#open >= this.#o.max) this.#evictOne();
    const entry: Entry = { agent: agentId, user: userId, evict };
    add(this.#byAgent, agentId, entry);
    if (userId !== undefined) add(this.#byUser, userId, entry);
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

  /** The oldest entry of the agent holding the most (the newcomer's own, when that is it). */
  #evictOne(): void {
    let victim: Entry | undefined;
    let most = 0;
    for (const held of this.#byAgent.values()) {
      if (held.size > most) {
        most = held.size;
        victim = held.values().next().value;
      }
    }
    if (!victim) return;
    this.#forget(victim);
    try {
      victim.evict();
    } catch {
      // Ending a connection that already broke: it is gone either way.
    }
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
    this.#open -= 1;
  }

  #refuse(who: 'agent' | 'user', max: number): Standing {
    const limit = `${this.#kind}_per_${who}` as CapDetails['limit'];
    const what = this.#kind === 'streams' ? 'open event streams' : 'calls waiting for a person';
    return {
      ok: false,
      error: new ToolgateError(
        'LIMIT_REACHED',
        `this ${who} has ${max} ${what}, whichever credentials opened them; close one first`,
        { limit, max, retryAfterSeconds: RETRY_AFTER_S },
      ),
    };
  }
}

function add(map: Map<string, Set<Entry>>, key: string, entry: Entry): void {
  let set = map.get(key);
  if (!set) {
    set = new Set();
    map.set(key, set);
  }
  set.add(entry);
}
