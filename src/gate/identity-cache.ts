/**
 * @module The gate's identity cache: agents (with grants), users, whether a token's user is
 * disabled, open sessions and their egress pools, as of one identity revision. Dropped at once
 * when this process changes an identity, and within the revision check when another process
 * does. Counters that other replicas also write (budgets, the private-read flag) are read fresh
 * wherever a decision depends on them.
 */
import type { AgentPrincipal } from '../core/index.js';
import type { AgentService, AgentView, UserService, UserView } from '../domain/identity/index.js';
import type { SessionService } from '../domain/sessions/index.js';
import type { ByteBudget } from '../execution/sandbox/index.js';
import type { SessionRow } from '../records/store/index.js';

/** Entries kept per map; past this the oldest is dropped (and read again when used). */
export const SESSION_CACHE_MAX = 10_000;

/** The session counters a call moves and the cached row must follow. */
type SessionCounter = 'external_sends' | 'spend_cents' | 'egress_bytes';

export class IdentityCache {
  readonly #agentService: AgentService;
  readonly #userService: UserService;
  readonly #sessionService: SessionService;
  #generation = 0;
  #agents = new Map<string, AgentView>();
  #users = new Map<string, UserView>();
  /** Whether a user a token vouches for is disabled here, per identity revision like #users. */
  #usersDisabled = new Map<string, boolean>();
  #sessionRows = new Map<string, SessionRow>();
  #egressBudgets = new Map<string, ByteBudget>();
  /** Bound once: the session service asks for users through these on every call. */
  readonly loadUser = (id: string): Promise<UserView> =>
    this.#cached(this.#users, id, () => this.#userService.get(id));
  readonly isDisabled = (id: string): Promise<boolean> =>
    this.#cached(this.#usersDisabled, id, () => this.#userService.disabled(id));

  constructor(agents: AgentService, users: UserService, sessions: SessionService) {
    this.#agentService = agents;
    this.#userService = users;
    this.#sessionService = sessions;
  }

  drop(): void {
    this.#generation += 1;
    this.#agents = new Map();
    this.#users = new Map();
    this.#usersDisabled = new Map();
    this.#sessionRows = new Map();
    // A changed agent may have a changed egress budget: pools are rebuilt from the stored spend.
    this.#egressBudgets = new Map();
  }

  /** Per-session egress pools this process draws on (see steps/execute.ts). */
  get egressBudgets(): Map<string, ByteBudget> {
    return this.#egressBudgets;
  }

  agent(id: string): Promise<AgentView> {
    return this.#cached(this.#agents, id, () => this.#agentService.get(id));
  }

  async session(sessionId: string, who: AgentPrincipal): Promise<SessionRow> {
    const cached = this.#sessionRows.get(sessionId);
    if (cached) return this.#sessionService.admit(cached, sessionId, who);
    return this.#cached(this.#sessionRows, sessionId, () =>
      this.#sessionService.require(sessionId, who),
    );
  }

  /**
   * The session as stored now: for decisions on counters other processes may have moved. With
   * the row this call holds, its permitted set is kept, not read again (session-row.ts).
   */
  async freshSession(
    sessionId: string,
    who: AgentPrincipal,
    held?: SessionRow,
  ): Promise<SessionRow> {
    const row = held
      ? await this.#sessionService.requireFresh(sessionId, who, held)
      : await this.#sessionService.require(sessionId, who);
    if (this.#sessionRows.has(sessionId)) this.#sessionRows.set(sessionId, row);
    return row;
  }

  /** Follows a counter this process moved in the stored row (rows are replaced, never changed). */
  addToSession(sessionId: string, counter: SessionCounter, amount: number): void {
    const row = this.#sessionRows.get(sessionId);
    if (row) this.#sessionRows.set(sessionId, { ...row, [counter]: row[counter] + amount });
  }

  /** After the store recorded an untrusted source: the cached row says what the store says. */
  noteUntrustedSources(
    sessionId: string,
    sources: readonly string[],
    injectionSeen: boolean,
  ): void {
    const row = this.#sessionRows.get(sessionId);
    if (row) {
      this.#sessionRows.set(sessionId, {
        ...row,
        untrusted_sources: JSON.stringify(sources),
        injection_seen: injectionSeen ? 1 : row.injection_seen,
      });
    }
  }

  markPrivateRead(sessionId: string): void {
    const row = this.#sessionRows.get(sessionId);
    if (row) this.#sessionRows.set(sessionId, { ...row, private_data_read: 1 });
  }

  /** Reads through the cache; a read that raced an invalidation is not kept. */
  async #cached<T>(map: Map<string, T>, key: string, load: () => Promise<T>): Promise<T> {
    const hit = map.get(key);
    if (hit !== undefined) return hit;
    const generation = this.#generation;
    const value = await load();
    if (generation === this.#generation) {
      if (map.size >= SESSION_CACHE_MAX) {
        const oldest = map.keys().next();
        if (!oldest.done) map.delete(oldest.value);
      }
      map.set(key, value);
    }
    return value;
  }
}
