/**
 * @module Capability search within one caller's permitted set (C5, dynamic part; docs/architecture.md
 * §6, "Discovery for agents"). The caller (sessions/agent-discovery.ts) says which tools the agent
 * may be offered; this module searches and ranks only those. It must never let a tool outside the
 * set change an answer: the BM25 index is built over the set alone (so term statistics, scores and
 * order depend on nothing else), the typo-tolerant fallback runs only when nothing in the set
 * matched, and alternatives are drawn from the set. Ranking folds in match, health, SLA and tier.
 */
import { createHash } from 'node:crypto';
import MiniSearch from 'minisearch';
import type { ToolVersionRow } from '../../records/store/index.js';
import type { CatalogService } from './catalog-service.js';
import { tokenize } from './discovery.js';
import { effectiveLifecycle, isOfferable } from './lifecycle.js';
import type { AccessTier, Sla } from './tool-definition.js';
import { type HealthReader, type ToolHealthView, UNCHECKED_HEALTH } from './tool-health-view.js';
import { offerableRows } from './tool-repository.js';

/** One tool of a caller's permitted set, under the name the caller calls it by. */
export interface ScopedTool {
  readonly id: string;
  readonly version: string;
  readonly name: string;
}

/**
 * A permitted set to search. `key` identifies its membership (same key, same tools and the same
 * `admits`): indexes are cached by it, so two sessions with the same set share one.
 */
export interface DiscoveryScope {
  readonly key: string;
  readonly tools: readonly ScopedTool[];
  /** Live checks the set must still pass (grants, tier): a tool failing them is left out. */
  readonly admits?: (tool: ScopedToolFacts) => boolean;
}

/** What a scope's `admits` may look at. */
export interface ScopedToolFacts {
  readonly id: string;
  readonly access_tier: AccessTier;
  readonly required_capabilities: readonly string[];
}

export interface AgentDiscoveryQuery {
  readonly q?: string;
  /** Every tag listed must be on the tool. */
  readonly tags?: readonly string[];
  readonly limit?: number;
}

export interface DiscoveryAlternative {
  readonly id: string;
  readonly version: string;
  readonly name: string;
  readonly health: ToolHealthView;
}

export interface AgentDiscoveryHit {
  readonly id: string;
  readonly version: string;
  /** The name to call it by in this session (unique within the set). */
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly action_class: string;
  readonly access_tier: AccessTier;
  readonly lifecycle: 'active' | 'deprecated';
  readonly deprecated: boolean;
  readonly retire_at: string | null;
  readonly sla: Sla | null;
  readonly health: ToolHealthView;
  /** The health monitor reports this tool degraded: it works, but a healthy alternative may serve better. */
  readonly degraded: boolean;
  /** How well the tool matched the query, 0–1 (1: the best match in the set). */
  readonly match: number;
  /** The rank: match weighed by health, SLA, tier and lifecycle. Results are sorted by it. */
  readonly score: number;
  /** For a degraded tool: healthy tools of the same set that match the query or share a tag. */
  readonly alternatives?: readonly DiscoveryAlternative[];
}

export const MAX_AGENT_DISCOVERY_LIMIT = 50;
const DEFAULT_LIMIT = 10;
const MAX_ALTERNATIVES = 3;

interface Doc {
  readonly key: string;
  readonly id: string;
  readonly version: string;
  readonly title: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly tagText: string;
  readonly action_class: string;
  readonly access_tier: AccessTier;
  readonly required_capabilities: readonly string[];
  readonly lifecycle: 'active' | 'deprecated';
  readonly retire_at: string | null;
  readonly sla: Sla | null;
  readonly definition_hash: string;
  /** The SLA and tier part of the quality, fixed for a version. */
  readonly staticQuality: number;
}

interface SetIndex {
  readonly index: MiniSearch<{ key: string }>;
  /** The set's documents by key, and the call name of each. */
  readonly docs: ReadonlyMap<string, { readonly doc: Doc; readonly name: string }>;
  /** The set's documents by tag (alternatives that share one). */
  readonly byTag: ReadonlyMap<string, readonly { readonly doc: Doc; readonly name: string }[]>;
}

/**
 * Weights of the rank (docs/architecture.md §6). Match dominates: quality moves a tool by at most
 * half, so a poorly matching healthy tool never outranks a tool that matches well unless the
 * latter is degraded or deprecated.
 */
const QUALITY = { health: 0.6, sla: 0.25, tier: 0.15 } as const;
const DEPRECATED_WEIGHT = 0.5;
/** A tool matching only some of the query's words counts half as well as one matching all. */
const PARTIAL_MATCH_WEIGHT = 0.5;
const TIER_FACTOR: Record<AccessTier, number> = { public: 1, restricted: 0.5, privileged: 0 };

const clamp01 = (x: number) => (Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0);

function healthFactor(h: ToolHealthView): number {
  const s = clamp01(h.score);
  switch (h.state) {
    case 'healthy':
      return 0.6 + 0.4 * s;
    case 'unchecked':
      return 0.5;
    case 'degraded':
      return 0.1 + 0.3 * s;
    case 'unavailable':
      return 0;
  }
}

/** Higher availability and a tighter latency target rank higher; no SLA is neutral. */
function slaFactor(sla: Sla | null): number {
  if (!sla) return 0.5;
  const availability = clamp01((sla.availability_percent - 90) / 10);
  const latency = 1 / (1 + sla.target_latency_ms / 1000);
  return 0.5 * availability + 0.5 * latency;
}

/** 0.5–1: the factor match is multiplied by. Never above 1, which the early stop relies on. */
function qualityOf(doc: Doc, health: ToolHealthView): number {
  const quality = QUALITY.health * healthFactor(health) + doc.staticQuality;
  return (0.5 + 0.5 * quality) * (doc.lifecycle === 'deprecated' ? DEPRECATED_WEIGHT : 1);
}

/** Indexes kept, and documents across them (a set of 10,000 tools is one large index). */
const MAX_CACHED_SETS = 64;
const MAX_CACHED_DOCS = 50_000;
/** Past this many changed tools a full reload is cheaper than patching the documents. */
const MAX_INCREMENTAL_TOOLS = 500;

export class ScopedDiscovery {
  readonly #catalog: CatalogService;
  readonly #health: HealthReader;
  /** Every offerable version's document, by `id@version`, as of `#revision`. */
  #docs = new Map<string, Doc>();
  #keysOf = new Map<string, string[]>();
  #revision: number | null = null;
  #loading: Promise<void> | null = null;
  /** Least recently used first. */
  readonly #sets = new Map<string, SetIndex>();
  #cachedDocs = 0;

  constructor(catalog: CatalogService, health: HealthReader = UNCHECKED_HEALTH) {
    this.#catalog = catalog;
    this.#health = health;
  }

  /**
   * The scope's tools that match, best first. Nothing outside `scope.tools` is read for the
   * answer: not for results, not for scores, not for alternatives.
   */
  async search(scope: DiscoveryScope, query: AgentDiscoveryQuery): Promise<AgentDiscoveryHit[]> {
    const revision = await this.#fresh();
    const set = this.#setIndex(scope, revision);
    const now = this.#catalog.now();
    const limit = Math.min(Math.max(query.limit ?? DEFAULT_LIMIT, 1), MAX_AGENT_DISCOVERY_LIMIT);
    const tags = query.tags ?? [];
    const healthCache = new Map<string, ToolHealthView>();
    const healthOf = (doc: Doc): ToolHealthView => {
      let h = healthCache.get(doc.key);
      if (!h) {
        h = this.#health.healthOf(doc.id, doc.version);
        healthCache.set(doc.key, h);
      }
      return h;
    };
    // The sweep may not have run yet: never offer a version whose window has ended. An
    // unavailable tool is not offered (C14), so it is neither found nor suggested.
    // (`scope.admits` was applied when the set's index was built: its key covers it.)
    const usable = (doc: Doc) =>
      isOfferable(effectiveLifecycle(doc.lifecycle, doc.retire_at, now)) &&
      healthOf(doc).state !== 'unavailable';
    const eligible = (doc: Doc) => tags.every((t) => doc.tags.includes(t)) && usable(doc);

    type Ranked = { doc: Doc; name: string; match: number; score: number };
    const ranked: Ranked[] = [];
    const text = query.q?.trim() ?? '';
    if (text === '') {
      // Listed by quality: only the best `limit` are kept (a set may hold 10,000 tools).
      // With tags, only the tools carrying the rarest of them need to be looked at.
      let candidates: Iterable<{ doc: Doc; name: string }> = set.docs.values();
      let fewest = Number.POSITIVE_INFINITY;
      for (const tag of tags) {
        const tagged = set.byTag.get(tag) ?? [];
        if (tagged.length < fewest) {
          fewest = tagged.length;
          candidates = tagged;
        }
      }
      for (const { doc, name } of candidates) {
        if (!eligible(doc)) continue;
        insertRanked(ranked, { doc, name, match: 1, score: qualityOf(doc, healthOf(doc)) }, limit);
      }
    } else {
      // Every word first, then some, each list read best first. A score never exceeds its
      // match, so a list is read only while its match can still beat the limit-th rank.
      const firstEligible = (results: readonly { id: unknown; score: number }[]) => {
        for (const r of results) {
          const entry = set.docs.get(r.id as string);
          if (entry && eligible(entry.doc)) return r.score;
        }
        return 0;
      };
      const seen = new Set<string>();
      // The best `limit` scores so far, descending: the last is what a newcomer must beat.
      const best: number[] = [];
      const keep = (score: number) => {
        if (best.length === limit && score <= (best[limit - 1] ?? 0)) return;
        let i = best.length;
        while (i > 0 && (best[i - 1] ?? 0) < score) i--;
        best.splice(i, 0, score);
        if (best.length > limit) best.pop();
      };
      const read = (
        results: readonly { id: unknown; score: number }[],
        top: number,
        weight: number,
      ) => {
        for (const r of results) {
          const match = Math.min(1, r.score / top) * weight;
          if (best.length === limit && match < (best[limit - 1] ?? 0)) break;
          const key = r.id as string;
          if (seen.has(key)) continue;
          seen.add(key);
          const entry = set.docs.get(key);
          if (!entry || !eligible(entry.doc)) continue;
          const score = match * qualityOf(entry.doc, healthOf(entry.doc));
          ranked.push({ ...entry, match, score });
          keep(score);
        }
      };
      // The best tool matching every word has match 1; a tool matching only some counts at
      // most half, so that list is searched only while such a tool could still make the results.
      const all = set.index.search(text, { ...SEARCH_OPTIONS, prefix, combineWith: 'AND' });
      const topAll = firstEligible(all);
      if (topAll > 0) read(all, topAll, 1);
      if (!(best.length === limit && (best[limit - 1] ?? 0) >= PARTIAL_MATCH_WEIGHT)) {
        let some = set.index.search(text, { ...SEARCH_OPTIONS, prefix });
        // Typo-tolerant only when nothing in the set matched any word.
        if (some.length === 0) some = set.index.search(text, { ...SEARCH_OPTIONS, fuzzy: 0.34 });
        const top = topAll > 0 ? topAll : firstEligible(some);
        if (top > 0) read(some, top, PARTIAL_MATCH_WEIGHT);
      }
    }
    ranked.sort(
      (a, b) => b.score - a.score || (a.doc.id < b.doc.id ? -1 : a.doc.id > b.doc.id ? 1 : 0),
    );
    const picked = ranked.slice(0, limit);

    const alternativesFor = (degraded: Ranked): DiscoveryAlternative[] => {
      const out: DiscoveryAlternative[] = [];
      const take = (entry: { doc: Doc; name: string }) => {
        if (out.length === MAX_ALTERNATIVES || entry.doc.key === degraded.doc.key) return;
        if (!usable(entry.doc) || healthOf(entry.doc).state !== 'healthy') return;
        if (out.some((a) => a.id === entry.doc.id)) return;
        out.push({
          id: entry.doc.id,
          version: entry.doc.version,
          name: entry.name,
          health: healthOf(entry.doc),
        });
      };
      // Those that matched the query, best first; then tools sharing a tag, healthiest first.
      for (const r of ranked) {
        if (out.length === MAX_ALTERNATIVES) return out;
        take(r);
      }
      const sharing: Ranked[] = [];
      const considered = new Set<string>();
      for (const tag of degraded.doc.tags) {
        for (const e of set.byTag.get(tag) ?? []) {
          if (considered.has(e.doc.key)) continue;
          considered.add(e.doc.key);
          if (e.doc.key === degraded.doc.key || healthOf(e.doc).state !== 'healthy') continue;
          if (!usable(e.doc)) continue;
          const score = qualityOf(e.doc, healthOf(e.doc));
          insertRanked(sharing, { ...e, match: 0, score }, MAX_ALTERNATIVES * 2);
        }
      }
      for (const e of sharing) take(e);
      return out;
    };

    return picked.map((r) => {
      const health = healthOf(r.doc);
      const degraded = health.state === 'degraded';
      return {
        id: r.doc.id,
        version: r.doc.version,
        name: r.name,
        title: r.doc.title,
        description: r.doc.description,
        tags: r.doc.tags,
        action_class: r.doc.action_class,
        access_tier: r.doc.access_tier,
        lifecycle: r.doc.lifecycle,
        deprecated: r.doc.lifecycle === 'deprecated',
        retire_at: r.doc.retire_at,
        sla: r.doc.sla,
        health: { state: health.state, score: clamp01(health.score) },
        degraded,
        match: round(r.match),
        score: round(r.score),
        ...(degraded ? { alternatives: alternativesFor(r) } : {}),
      };
    });
  }

  /** The index of this set's offerable documents at this revision, built once and cached. */
  #setIndex(scope: DiscoveryScope, revision: number): SetIndex {
    const cacheKey = `${revision}:${scope.key}`;
    const cached = this.#sets.get(cacheKey);
    if (cached) {
      this.#sets.delete(cacheKey);
      this.#sets.set(cacheKey, cached);
      return cached;
    }
    const docs = new Map<string, { doc: Doc; name: string }>();
    for (const tool of scope.tools) {
      const key = `${tool.id}@${tool.version}`;
      const doc = this.#docs.get(key);
      // Not offerable (quarantined, retired, an upstream entry) or no longer admitted (a grant
      // revoked since the session opened): not in the set's index at all, so it moves no score.
      if (doc && (scope.admits?.(doc) ?? true)) docs.set(key, { doc, name: tool.name });
    }
    const index = new MiniSearch<{ key: string }>({
      idField: 'key',
      fields: ['title', 'description', 'tagText'],
      storeFields: [],
      tokenize,
    });
    index.addAll([...docs.values()].map((e) => e.doc));
    const byTag = new Map<string, { doc: Doc; name: string }[]>();
    for (const e of docs.values()) {
      for (const tag of e.doc.tags) {
        const list = byTag.get(tag) ?? [];
        list.push(e);
        byTag.set(tag, list);
      }
    }
    const built: SetIndex = { index, docs, byTag };
    this.#sets.set(cacheKey, built);
    this.#cachedDocs += docs.size;
    for (const [k, v] of this.#sets) {
      if (this.#sets.size <= MAX_CACHED_SETS && this.#cachedDocs <= MAX_CACHED_DOCS) break;
      if (k === cacheKey) continue;
      this.#sets.delete(k);
      this.#cachedDocs -= v.docs.size;
    }
    return built;
  }

  /** The revision the documents are current at (reloaded when the catalog revision moved). */
  async #fresh(): Promise<number> {
    const revision = await this.#catalog.revision();
    // A load already under way may be for an older revision: wait for it, then load again.
    while (this.#revision === null || this.#revision < revision) {
      this.#loading ??= this.#load(revision).finally(() => {
        this.#loading = null;
      });
      await this.#loading;
    }
    return this.#revision;
  }

  async #load(revision: number): Promise<void> {
    const db = this.#catalog.store.db;
    if (this.#revision !== null) {
      const changed = await db
        .selectFrom('tool_versions')
        .select('tool_id')
        .distinct()
        .where('revision', '>', this.#revision)
        .execute();
      if (changed.length <= MAX_INCREMENTAL_TOOLS) {
        const ids = changed.map((r) => r.tool_id);
        const rows = ids.length === 0 ? [] : await offerableRows(db, ids);
        for (const id of ids) {
          for (const key of this.#keysOf.get(id) ?? []) this.#docs.delete(key);
          this.#keysOf.delete(id);
        }
        this.#addRows(rows);
        this.#revision = revision;
        this.#dropStaleSets(revision);
        return;
      }
    }
    this.#docs = new Map();
    this.#keysOf = new Map();
    this.#addRows(await offerableRows(db));
    this.#revision = revision;
    this.#dropStaleSets(revision);
  }

  #addRows(rows: readonly ToolVersionRow[]): void {
    for (const row of rows) {
      const doc = toDoc(row);
      if (!doc) continue;
      this.#docs.set(doc.key, doc);
      const keys = this.#keysOf.get(doc.id) ?? [];
      keys.push(doc.key);
      this.#keysOf.set(doc.id, keys);
    }
  }

  /** Indexes of an older revision are never read again. */
  #dropStaleSets(revision: number): void {
    const prefix = `${revision}:`;
    for (const [k, v] of this.#sets) {
      if (k.startsWith(prefix)) continue;
      this.#sets.delete(k);
      this.#cachedDocs -= v.docs.size;
    }
  }
}

const prefix = (term: string) => term.length >= 4;

/** Inserts into a list kept sorted best first (score, then id) and at most `cap` long. */
function insertRanked<T extends { readonly doc: Doc; readonly score: number }>(
  list: T[],
  item: T,
  cap: number,
): void {
  const before = (a: T, b: T) => a.score > b.score || (a.score === b.score && a.doc.id < b.doc.id);
  const last = list[list.length - 1];
  if (list.length === cap && last && !before(item, last)) return;
  let i = list.length;
  while (i > 0 && before(item, list[i - 1] as T)) i--;
  list.splice(i, 0, item);
  if (list.length > cap) list.pop();
}
/** As the catalog's own search weighs them (catalog/discovery.ts). */
const SEARCH_OPTIONS = {
  boost: { title: 3, tagText: 2, description: 1 },
  combineWith: 'OR',
} as const;
const round = (x: number) => Math.round(x * 1000) / 1000;

/** A version's search document; null for an upstream resource or prompt (not a tool to call). */
function toDoc(row: ToolVersionRow): Doc | null {
  const definition = JSON.parse(row.definition) as {
    sla?: Sla;
    required_capabilities?: string[];
    runtime?: { kind?: string; entry?: unknown };
  };
  if (definition.runtime?.kind === 'mcp' && definition.runtime.entry !== undefined) return null;
  const tags = JSON.parse(row.tags) as string[];
  return {
    key: `${row.tool_id}@${row.version}`,
    id: row.tool_id,
    version: row.version,
    title: row.name,
    description: row.description,
    tags,
    tagText: tags.join(' '),
    action_class: row.action_class,
    access_tier: row.access_tier as AccessTier,
    required_capabilities: definition.required_capabilities ?? [],
    lifecycle: row.lifecycle as 'active' | 'deprecated',
    retire_at: row.retire_at,
    sla: definition.sla ?? null,
    definition_hash: row.definition_hash,
    staticQuality:
      QUALITY.sla * slaFactor(definition.sla ?? null) +
      QUALITY.tier * TIER_FACTOR[row.access_tier as AccessTier],
  };
}

/** A scope key for a list of tools: the same membership in the same order gives the same key. */
export function scopeKey(tools: readonly ScopedTool[]): string {
  const hash = createHash('sha256');
  for (const t of tools) hash.update(`${t.id}@${t.version}=${t.name}\n`);
  return hash.digest('base64url');
}
