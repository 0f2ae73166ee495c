/**
 * @module The provider specs a running gateway calls under (docs/architecture.md §4, "When a
 * provider change takes effect"): each read once from the store and kept until its stored row
 * changes. A change made in this process drops its spec at once (ProviderService.saveIn); one made
 * by another process — the CLI's `apply -f` on the same database, another replica — when the gate's
 * revision watch sees the catalog revision move (`recheck`, which a provider update bumps): a spec
 * whose stored hash differs from the one it was read with is dropped, read again on its next use,
 * and the processes started under it are closed as an update in this process closes them.
 */
import { ToolgateError } from '../../core/index.js';
import type { ProviderRow, Store } from '../../records/store/index.js';
import type { ProviderSpec } from './provider-spec.js';

/** A provider's stored row; rejects with PROVIDER_NOT_FOUND when there is none. */
export async function providerRow(
  db: Pick<Store['db'], 'selectFrom'>,
  name: string,
): Promise<ProviderRow> {
  const row = await (db as Store['db'])
    .selectFrom('providers')
    .selectAll()
    .where('name', '=', name)
    .executeTakeFirst();
  if (!row)
    throw new ToolgateError('PROVIDER_NOT_FOUND', `no provider ${name}`, { provider: name });
  return row;
}

interface Cached {
  readonly spec: ProviderSpec;
  /** The stored `spec_hash` the spec was read with: what `recheck` compares. */
  readonly hash: string;
}

export class ProviderSpecs {
  readonly #db: Store['db'];
  readonly #stale: (name: string) => void;
  readonly #cached = new Map<string, Cached>();
  /**
   * Moved by every drop and every recheck: a read that began before one may be of a row already
   * replaced, so it answers its own caller but is not kept (else it could outlive the recheck that
   * should have dropped it, until the next change).
   */
  #generation = 0;

  /** `stale` is told each provider whose spec was dropped because its stored row changed. */
  constructor(db: Store['db'], stale: (name: string) => void) {
    this.#db = db;
    this.#stale = stale;
  }

  /**
   * A provider's spec, read once until its row changes. Each stored spec is handed out as one
   * object until it is dropped: the upstream pool starts a session's process anew for a call under
   * another object (upstream-pool.ts). Rejects when the provider is unknown.
   */
  async get(name: string): Promise<ProviderSpec> {
    const cached = this.#cached.get(name);
    if (cached) return cached.spec;
    const generation = this.#generation;
    const row = await providerRow(this.#db, name);
    const spec = JSON.parse(row.spec) as ProviderSpec;
    if (generation === this.#generation) this.#cached.set(name, { spec, hash: row.spec_hash });
    return spec;
  }

  /** This process changed the provider: its spec is read again on its next use. */
  drop(name: string): void {
    this.#generation += 1;
    this.#cached.delete(name);
  }

  /**
   * The catalog revision moved (perhaps by another process): every kept spec whose stored hash is
   * no longer the one it was read with (or whose provider is gone) is dropped, and `stale` told.
   * One read of the kept names' hashes; nothing is read when nothing is kept. Throws on a store
   * error, leaving every spec kept (the caller reads again at its next look).
   */
  async recheck(): Promise<void> {
    this.#generation += 1;
    if (this.#cached.size === 0) return;
    const rows = await this.#db
      .selectFrom('providers')
      .select(['name', 'spec_hash'])
      .where('name', 'in', [...this.#cached.keys()])
      .execute();
    const stored = new Map(rows.map((r) => [r.name, r.spec_hash] as const));
    for (const [name, cached] of [...this.#cached]) {
      if (stored.get(name) === cached.hash) continue;
      this.#cached.delete(name);
      this.#stale(name);
    }
  }
}
