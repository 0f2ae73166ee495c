/**
 * @module When the gate's caches are dropped: changes made in this process at once; changes made
 * by another process (another replica, the CLI) when the fleet's notification of the revision
 * bump arrives (PostgreSQL `LISTEN/NOTIFY`, sent by the committing transaction: docs/architecture.md
 * §5, "Replicas that agree"), or, while no notification can arrive (SQLite, or the fleet's
 * connection down), within REVISION_CHECK_MS, read from the stored catalog and identity revisions.
 * What else the process keeps by the catalog (the providers' specs and their processes) follows
 * the same revision: its followers are awaited before a call goes on past a moved revision.
 */
import { FLEET_CHANNELS, type Fleet, localIdentityChangeCount } from '../records/store/index.js';
import type { IdentityCache } from './identity-cache.js';
import type { ToolCache } from './tool-cache.js';

/** How long a catalog or identity change made by another process may take to reach this gate. */
export const REVISION_CHECK_MS = 200;
/**
 * While the fleet's notifications arrive, the revisions are still read this often: a safety net
 * only, never what the 100 ms bound rests on.
 */
export const REVISION_FALLBACK_MS = 5_000;

export interface Revisions {
  readonly catalog: number;
  readonly identity: number;
}

/**
 * Something outside the gate kept by the catalog revision (the provider specs calls run under:
 * ProviderService.recheck), checked again whenever the watch sees the revision move. Rejects on a
 * store error; the revision is then not taken as seen, so the next look asks again.
 */
export type CatalogFollower = () => Promise<void>;

/** The part of the store's fleet the watch listens to (Store.fleet). */
export type RevisionSignal = Pick<Fleet, 'listen' | 'listening' | 'onListening'>;

export class RevisionWatch {
  readonly #read: () => Promise<Revisions>;
  readonly #tools: ToolCache;
  readonly #identities: IdentityCache;
  readonly #signal: RevisionSignal | null;
  readonly #followers: readonly CatalogFollower[];
  #catalog = -1;
  #identity = -1;
  #identityLocal = -1;
  #checkedAt = 0;
  /** Notifications heard so far: a read that began before one does not count as after it. */
  #heard = 0;

  constructor(
    read: () => Promise<Revisions>,
    tools: ToolCache,
    identities: IdentityCache,
    signal: RevisionSignal | null = null,
    followers: readonly CatalogFollower[] = [],
  ) {
    this.#read = read;
    this.#followers = followers;
    this.#tools = tools;
    this.#identities = identities;
    this.#signal = signal;
    // A notification is a hint: it drops what it names at once (dropping is always safe) and
    // makes the next call read the revisions again; its payload decides nothing else.
    signal?.listen(FLEET_CHANNELS.revisions, (payload) => {
      if (payload === 'catalog') this.#tools.invalidate();
      else this.#identities.drop();
      this.#stale();
    });
    // Back after a gap: what changed meanwhile was not announced, so read once.
    signal?.onListening(() => this.#stale());
  }

  #stale(): void {
    this.#heard += 1;
    this.#checkedAt = 0;
  }

  /** A catalog change in this process: compiled tools go now, and the next call re-reads. */
  catalogChanged(): void {
    this.#tools.invalidate();
    this.#checkedAt = 0;
  }

  /**
   * Drops what changed since the last look. Returns null when nothing had to be read (no await
   * on the hot path), else the read's promise.
   */
  refresh(): Promise<void> | null {
    const local = localIdentityChangeCount();
    if (local !== this.#identityLocal) {
      this.#identities.drop();
      this.#identityLocal = local;
    }
    const nowMs = Date.now();
    const every = this.#signal?.listening ? REVISION_FALLBACK_MS : REVISION_CHECK_MS;
    if (nowMs - this.#checkedAt <= every) return null;
    return this.#poll(nowMs);
  }

  async #poll(nowMs: number): Promise<void> {
    const heard = this.#heard;
    const revisions = await this.#read();
    if (revisions.catalog !== this.#catalog) {
      this.#tools.invalidate();
      for (const follow of this.#followers) await follow();
      this.#catalog = revisions.catalog;
    }
    if (revisions.identity !== this.#identity) {
      this.#identities.drop();
      this.#identity = revisions.identity;
    }
    // A notification heard during the read may be of a change the read did not see.
    this.#checkedAt = heard === this.#heard ? nowMs : 0;
  }
}
