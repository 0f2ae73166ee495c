/**
 * @module The client SDK's cache of a session's tool definitions: the agent's last-known tool set,
 * served while the gateway is briefly away (up to `ttlMs` after the gateway last confirmed it), and
 * dropped the moment the gateway says it is stale — a new ETag (REST), `list_changed` (MCP), a call
 * answered "not registered" or "retired". It holds definitions only: nothing here can run a tool.
 */

/** One tool as the gateway lists it (MCP `tools/list` shape, REST `format=mcp` alike). */
export interface ToolDescriptor {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  readonly annotations?: Readonly<Record<string, unknown>>;
}

/** What `tools()` answers: the set, and whether the gateway or the cache gave it. */
export interface ToolSet {
  readonly tools: readonly ToolDescriptor[];
  /** `gateway`: confirmed just now; `cache`: the gateway is away and this is the last-known set. */
  readonly source: 'gateway' | 'cache';
  /** When the gateway last confirmed this set. */
  readonly confirmedAt: Date;
  /** The gateway's validator for the set (REST ETag), or null (MCP). */
  readonly revision: string | null;
}

export interface CacheOptions {
  /** How long after the gateway last confirmed it the set may be served during an outage; default 5 min. */
  readonly ttlMs?: number;
  /** The clock, for tests that step time; default Date.now. */
  readonly now?: () => number;
}

interface Entry {
  readonly tools: readonly ToolDescriptor[];
  readonly revision: string | null;
  confirmedAt: number;
}

export class DefinitionsCache {
  readonly #ttlMs: number;
  readonly #now: () => number;
  #entry: Entry | null = null;
  /** How many times a staleness signal dropped the set (for tests and logs). */
  dropped = 0;

  constructor(options: CacheOptions = {}) {
    this.#ttlMs = options.ttlMs ?? 300_000;
    this.#now = options.now ?? Date.now;
  }

  /** The validator to revalidate with, or null when nothing is cached. */
  get revision(): string | null {
    return this.#entry?.revision ?? null;
  }

  /** The gateway answered a set: it replaces whatever was held. */
  store(tools: readonly ToolDescriptor[], revision: string | null): ToolSet {
    this.#entry = { tools, revision, confirmedAt: this.#now() };
    return this.#view('gateway');
  }

  /** The gateway said the held set is still current (304): confirmed now. */
  confirm(): ToolSet | null {
    if (this.#entry === null) return null;
    this.#entry.confirmedAt = this.#now();
    return this.#view('gateway');
  }

  /** The gateway is away: the held set while within its TTL, else null (the caller fails closed). */
  servable(): ToolSet | null {
    if (this.#entry === null) return null;
    if (this.#now() - this.#entry.confirmedAt > this.#ttlMs) {
      this.#entry = null;
      return null;
    }
    return this.#view('cache');
  }

  /** The gateway said the set changed (list_changed, a refusal naming a tool gone): forget it. */
  drop(): void {
    if (this.#entry !== null) this.dropped += 1;
    this.#entry = null;
  }

  #view(source: ToolSet['source']): ToolSet {
    const e = this.#entry as Entry;
    return {
      tools: e.tools,
      source,
      confirmedAt: new Date(e.confirmedAt),
      revision: e.revision,
    };
  }
}
