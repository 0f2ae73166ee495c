/**
 * @module The composition root: opens the store and wires the services every front uses. Fronts
 * (REST, CLI, later MCP) get a `Toolgate` and never touch the store themselves.
 */
import { CatalogService, Discovery } from './catalog/index.js';
import { ApplyService } from './config/index.js';
import type { Clock } from './core/index.js';
import { AgentService } from './identity/index.js';
import { DEFAULT_DB_URL, listEvents, openStore, type Store } from './store/index.js';

export interface Toolgate {
  readonly store: Pick<Store, 'dialect' | 'location' | 'ping'>;
  readonly catalog: CatalogService;
  readonly discovery: Discovery;
  readonly agents: AgentService;
  readonly config: ApplyService;
  readonly events: {
    list(filter: {
      subject?: string;
      afterSeq?: number;
      limit: number;
    }): ReturnType<typeof listEvents>;
  };
  close(): Promise<void>;
}

export interface ToolgateOptions {
  /** `sqlite:PATH` (default `sqlite:./data/toolgate.db`) or `postgres://…`. */
  readonly db?: string;
  readonly clock?: Clock;
}

export async function openToolgate(options: ToolgateOptions = {}): Promise<Toolgate> {
  const store = await openStore(options.db ?? DEFAULT_DB_URL);
  const clock = options.clock ? { clock: options.clock } : {};
  const catalog = new CatalogService(store, clock);
  const agents = new AgentService(store, clock);
  return {
    store,
    catalog,
    discovery: new Discovery(catalog),
    agents,
    config: new ApplyService(catalog, agents),
    events: { list: (filter) => listEvents(store.db, filter) },
    close: () => store.close(),
  };
}
