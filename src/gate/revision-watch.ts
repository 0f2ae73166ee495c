/**
 * @module When the gate's caches are dropped: changes made in this process at once, changes made
 * by another process (another replica, the CLI) within REVISION_CHECK_MS, read from the stored
 * catalog and identity revisions.
 */
import { localIdentityChangeCount } from '../records/store/index.js';
import type { IdentityCache } from './identity-cache.js';
import type { ToolCache } from './tool-cache.js';

/** How long a catalog or identity change made by another process may take to reach this gate. */
export const REVISION_CHECK_MS = 200;

export interface Revisions {
  readonly catalog: number;
  readonly identity: number;
}

export class RevisionWatch {
  readonly #read: () => Promise<Revisions>;
  readonly #tools: ToolCache;
  readonly #identities: IdentityCache;
  #catalog = -1;
  #identity = -1;
  #identityLocal = -1;
  #checkedAt = 0;

  constructor(read: () => Promise<Revisions>, tools: ToolCache, identities: IdentityCache) {
    this.#read = read;
    this.#tools = tools;
    this.#identities = identities;
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
    if (nowMs - this.#checkedAt <= REVISION_CHECK_MS) return null;
    return this.#poll(nowMs);
  }

  async #poll(nowMs: number): Promise<void> {
    const revisions = await this.#read();
    if (revisions.catalog !== this.#catalog) {
      this.#tools.invalidate();
      this.#catalog = revisions.catalog;
    }
    if (revisions.identity !== this.#identity) {
      this.#identities.drop();
      this.#identity = revisions.identity;
    }
    this.#checkedAt = nowMs;
  }
}
