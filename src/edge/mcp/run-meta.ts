/**
 * @module Which run a 2026-07-28 request belongs to. A request carrying
 * `_meta["io.toolgate/run"]` continues that run (the gate checks it belongs to the caller on the
 * call itself: no extra lookup here). A request without one continues this front's default run of
 * the same principal, minted on the principal's first handle-less request; its handle is returned
 * in every result's `_meta`, so the client can carry it (and should: a handle is what makes a run
 * span replicas). Default runs are remembered per principal in a bounded map.
 */
import type { AgentApi } from '../../api/index.js';
import type { AgentPrincipal } from '../../core/index.js';

/** The `_meta` key a 2026-07-28 client carries its run handle under (toolgate's own prefix). */
export const RUN_META_KEY = 'io.toolgate/run';

function keyOf(p: AgentPrincipal): string {
  return JSON.stringify([p.agentId, p.credential ?? null, p.user?.id ?? null]);
}

interface DefaultRun {
  readonly handle: string;
  readonly expiresAt: number;
}

/** Default runs this front remembers at most; the least recently used is forgotten first. */
const MAX_DEFAULT_RUNS = 10_000;

export class DefaultRuns {
  readonly #agent: AgentApi;
  readonly #ttlSeconds: number | undefined;
  readonly #via: string;
  readonly #runs = new Map<string, DefaultRun>();
  readonly #minting = new Map<string, Promise<DefaultRun>>();

  constructor(agent: AgentApi, options: { ttlSeconds?: number; via: string }) {
    this.#agent = agent;
    this.#ttlSeconds = options.ttlSeconds;
    this.#via = options.via;
  }

  /** A resolver for one principal's request(s). */
  for(principal: AgentPrincipal): RunResolver {
    return new RunResolver(this, principal);
  }

  /** The principal's default run, minted once (concurrent first requests share one mint). */
  async of(principal: AgentPrincipal): Promise<string> {
    const key = keyOf(principal);
    const known = this.#runs.get(key);
    if (known && known.expiresAt > Date.now()) {
      this.#runs.delete(key);
      this.#runs.set(key, known);
      return known.handle;
    }
    let minting = this.#minting.get(key);
    if (!minting) {
      minting = this.#agent.runs
        .mint(principal, {
          via: this.#via,
          ...(this.#ttlSeconds !== undefined ? { ttlSeconds: this.#ttlSeconds } : {}),
        })
        .then((r) => ({ handle: r.handle, expiresAt: Date.parse(r.expiresAt) }));
      this.#minting.set(key, minting);
      minting.then(
        (run) => {
          this.#minting.delete(key);
          this.#runs.set(key, run);
          if (this.#runs.size > MAX_DEFAULT_RUNS) {
            const oldest = this.#runs.keys().next().value;
            if (oldest !== undefined) this.#runs.delete(oldest);
          }
        },
        () => this.#minting.delete(key),
      );
    }
    return (await minting).handle;
  }

  /** A default run the gate refused (revoked, closed) is not handed out again. */
  forget(principal: AgentPrincipal, handle: string): void {
    const key = keyOf(principal);
    if (this.#runs.get(key)?.handle === handle) this.#runs.delete(key);
  }
}

export class RunResolver {
  readonly #defaults: DefaultRuns;
  readonly #principal: AgentPrincipal;

  constructor(defaults: DefaultRuns, principal: AgentPrincipal) {
    this.#defaults = defaults;
    this.#principal = principal;
  }

  /** The run a request names, or the principal's default run when it names none. */
  async resolve(handle: string | undefined): Promise<{ handle: string; implicit: boolean }> {
    if (handle !== undefined) return { handle, implicit: false };
    return { handle: await this.#defaults.of(this.#principal), implicit: true };
  }

  forget(handle: string): void {
    this.#defaults.forget(this.#principal, handle);
  }
}
