/**
 * @module Capability search (C5, dynamic part): BM25 over name, description and tags
 * with MiniSearch. Only offerable versions are indexed (active or deprecated, never quarantined),
 * one entry per tool: its newest such version. The index is rebuilt when the catalog revision
 * moves, so a change made by another process (the CLI, another replica) is seen on the next query.
 */
import MiniSearch from 'minisearch';
import semver from 'semver';
import type { ToolVersionRow } from '../../records/store/index.js';
import type { CatalogService } from './catalog-service.js';
import { effectiveLifecycle, isOfferable } from './lifecycle.js';
import type { LifecycleState } from './tool-definition.js';
import { offerableRows } from './tool-repository.js';

export interface DiscoveryHit {
  readonly id: string;
  readonly version: string;
  readonly name: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly action_class: string;
  readonly access_tier: string;
  readonly lifecycle: LifecycleState;
  readonly deprecated: boolean;
  readonly retire_at: string | null;
  readonly score: number;
}

export interface DiscoveryQuery {
  readonly q?: string;
  /** Every tag listed must be on the tool. */
  readonly tags?: readonly string[];
  readonly limit?: number;
}

interface IndexedTool {
  id: string;
  version: string;
  name: string;
  description: string;
  tags: string[];
  tagText: string;
  action_class: string;
  access_tier: string;
  lifecycle: 'active' | 'deprecated';
  retire_at: string | null;
}

/** Words that carry no capability: "refund an order" must not rank tools for containing "an". */
const STOP_WORDS = new Set(
  'a an and are as at be by for from has in is it its of on or that the this to was were will with'.split(
    ' ',
  ),
);

/** Splits identifiers too, so `search_tickets` matches "tickets". */
export const tokenize = (text: string): string[] =>
  text
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 0 && !STOP_WORDS.has(t));

const SEARCH_OPTIONS = {
  boost: { name: 3, tagText: 2, description: 1 },
  combineWith: 'OR',
} as const;

/** Deprecated tools stay findable (they still work during the window) but rank below current ones. */
const DEPRECATED_WEIGHT = 0.5;
export const MAX_DISCOVERY_LIMIT = 100;

export class Discovery {
  readonly #catalog: CatalogService;
  #built: {
    revision: number;
    index: MiniSearch<IndexedTool>;
    byId: Map<string, IndexedTool>;
  } | null = null;
  #building: Promise<void> | null = null;

  constructor(catalog: CatalogService) {
    this.#catalog = catalog;
  }

  async search(query: DiscoveryQuery): Promise<DiscoveryHit[]> {
    await this.#fresh();
    const built = this.#built;
    if (!built) return [];
    const now = this.#catalog.now();
    const limit = Math.min(Math.max(query.limit ?? 20, 1), MAX_DISCOVERY_LIMIT);
    const tags = query.tags ?? [];
    // The sweep may not have run yet; never offer a version whose window has ended.
    const eligible = (t: IndexedTool) =>
      tags.every((tag) => t.tags.includes(tag)) &&
      isOfferable(effectiveLifecycle(t.lifecycle, t.retire_at, now));
    const text = query.q?.trim() ?? '';

    const picked: { tool: IndexedTool; score: number }[] = [];
    if (text === '') {
      const sorted = [...built.byId.values()]
        .filter(eligible)
        .sort((a, b) => rankState(a) - rankState(b) || a.id.localeCompare(b.id));
      for (const tool of sorted.slice(0, limit)) picked.push({ tool, score: 0 });
    } else {
      // Tools matching every word rank first, then tools matching some; typo-tolerant (fuzzy)
      // matching runs only when neither finds anything, because fuzzy expansion over a large
      // vocabulary costs the most. Results arrive best first (deprecation is folded into the
      // score by boostDocument), so each tier is read only until `limit` tools are found.
      const seen = new Set<string>();
      const take = (results: readonly { id: unknown; score: number }[]) => {
        for (const r of results) {
          if (picked.length === limit) return;
          const tool = built.byId.get(r.id as string);
          if (!tool || seen.has(tool.id) || !eligible(tool)) continue;
          seen.add(tool.id);
          picked.push({ tool, score: r.score });
        }
      };
      const prefix = (term: string) => term.length >= 4;
      take(built.index.search(text, { ...SEARCH_OPTIONS, prefix, combineWith: 'AND' }));
      if (picked.length < limit) take(built.index.search(text, { ...SEARCH_OPTIONS, prefix }));
      if (picked.length === 0) take(built.index.search(text, { ...SEARCH_OPTIONS, fuzzy: 0.34 }));
    }
    return picked.map(({ tool, score }) => ({
      id: tool.id,
      version: tool.version,
      name: tool.name,
      description: tool.description,
      tags: tool.tags,
      action_class: tool.action_class,
      access_tier: tool.access_tier,
      lifecycle: tool.lifecycle,
      deprecated: tool.lifecycle === 'deprecated',
      retire_at: tool.retire_at,
      score: Math.round(score * 1000) / 1000,
    }));
  }

  async #fresh(): Promise<void> {
    const revision = await this.#catalog.revision();
    if (this.#built?.revision === revision) return;
    // Concurrent searches share one refresh.
    this.#building ??= this.#refresh(revision).finally(() => {
      this.#building = null;
    });
    await this.#building;
  }

  /**
   * Applies only the tools whose rows changed since the index was built (rows carry the revision
   * of the write that changed them); rebuilds from scratch the first time or after a large change.
   */
  async #refresh(revision: number): Promise<void> {
    const built = this.#built;
    const db = this.#catalog.store.db;
    if (built) {
      const changed = await db
        .selectFrom('tool_versions')
        .select('tool_id')
        .distinct()
        .where('revision', '>', built.revision)
        .execute();
      if (changed.length <= MAX_INCREMENTAL_TOOLS) {
        const ids = changed.map((r) => r.tool_id);
        const rows = ids.length === 0 ? [] : await offerableRows(db, ids);
        const newest = newestPerTool(rows);
        for (const id of ids) {
          if (built.index.has(id)) built.index.discard(id);
          built.byId.delete(id);
          const tool = newest.get(id);
          if (tool) {
            built.byId.set(id, tool);
            built.index.add(tool);
          }
        }
        // Rows of a write committed after `revision` was read may be included; applying them
        // again next time is harmless.
        built.revision = revision;
        return;
      }
    }
    const byId = newestPerTool(await offerableRows(db));
    const index = new MiniSearch<IndexedTool>({
      idField: 'id',
      fields: ['name', 'description', 'tagText'],
      storeFields: [],
      tokenize,
      searchOptions: {
        boostDocument: (id) =>
          byId.get(id as string)?.lifecycle === 'deprecated' ? DEPRECATED_WEIGHT : 1,
      },
    });
    index.addAll([...byId.values()]);
    this.#built = { revision, index, byId };
  }
}

/** Past this many changed tools a full rebuild is cheaper than patching the index. */
const MAX_INCREMENTAL_TOOLS = 500;

/** One entry per tool: its newest offerable version. */
function newestPerTool(rows: readonly ToolVersionRow[]): Map<string, IndexedTool> {
  const newest = new Map<string, IndexedTool>();
  for (const row of rows) {
    const current = newest.get(row.tool_id);
    if (current && semver.gt(current.version, row.version)) continue;
    const tags = JSON.parse(row.tags) as string[];
    newest.set(row.tool_id, {
      id: row.tool_id,
      version: row.version,
      name: row.name,
      description: row.description,
      tags,
      tagText: tags.join(' '),
      action_class: row.action_class,
      access_tier: row.access_tier,
      lifecycle: row.lifecycle as 'active' | 'deprecated',
      retire_at: row.retire_at,
    });
  }
  return newest;
}

function rankState(tool: IndexedTool): number {
  return tool.lifecycle === 'deprecated' ? 1 : 0;
}
