/**
 * @module Upstream MCP providers, their administration (C3, C15): registration, refresh, import
 * and classification of their tools, and the links to them (the mcp runtime, src/execution/runtimes/mcp,
 * forwards calls over the same links). Every listed tool is pinned by the
 * hash of its name, description and schemas and scanned for poisoning; it stays unoffered until
 * an admin classifies it, which registers the catalog entry `provider.tool`. A later listing that
 * changes a pinned tool (a rug pull), adds one or drops one quarantines it, raises an event and an
 * alert (`alert.provider_changed`), and moves the catalog revision, so MCP sessions get
 * list_changed. Its resources, templates and prompts go through the same machinery
 * (pinned-listing.ts, described by provider-entries.ts): none passes through unclassified.
 */

import {
  type Actor,
  type Clock,
  canonicalJson,
  sha256Hex,
  systemClock,
  ToolgateError,
} from '../../core/index.js';
import type {
  CatalogService,
  CatalogWrite,
  JsonSchemaObject,
  ScanFinding,
  ToolVersionDetail,
} from '../../domain/catalog/index.js';
import {
  appendEvent,
  type ProviderRow,
  type ProviderToolRow,
  type Store,
} from '../../records/store/index.js';
import {
  providerPathProblems,
  type SandboxProcess,
  type SandboxService,
} from '../sandbox/index.js';
import { type CheckedFetchOptions, checkedFetch, type EgressMeter } from './checked-fetch.js';
import { importedDefinition, type PinnedTool as ListedTool } from './imported-definition.js';
import { admitListedTools, type SkippedName } from './listed-names.js';
import { patternFindings, providerHosts, scanListedTool } from './listed-tool-scan.js';
import {
  type ChangeHooks,
  type Classified,
  classifyPinned,
  comparePinned,
  type PinnedKind,
  type PinnedRow,
  type ProviderChange,
} from './pinned-listing.js';
import {
  type EntryRefreshReport,
  ProviderEntries,
  type ProviderEntryState,
  type ProviderEntryView,
} from './provider-entries.js';
import {
  checkClassification,
  launchHash,
  normalizeProviderSpec,
  PROVIDER_LIMITS,
  type ProviderSpec,
  storedLaunchHash,
  type ToolClassification,
} from './provider-spec.js';
import { ProviderSpecs, providerRow } from './provider-specs.js';
import { ENTRY_KINDS, type EntryKind, type ListedEntry, listEntries } from './upstream-entries.js';
import {
  openUpstream,
  processLink,
  type UpstreamLink,
  type UpstreamPool,
} from './upstream-pool.js';

export type ProviderToolState = 'unclassified' | 'classified' | 'quarantined' | 'removed';

export interface ProviderToolView {
  readonly name: string;
  readonly tool_id: string;
  readonly state: ProviderToolState;
  readonly reason: string | null;
  readonly pin_hash: string;
  readonly findings: readonly ScanFinding[];
  readonly classification: ToolClassification | null;
  readonly tool_version: string | null;
  readonly description: string | null;
}

export interface ProviderSummary {
  readonly name: string;
  readonly owner: string;
  readonly transport: 'stdio' | 'http';
  readonly isolation: string;
  readonly refreshed_at: string | null;
  readonly tools: Readonly<Record<ProviderToolState, number>>;
  /** Resources, resource templates and prompts, by state. */
  readonly entries: Readonly<Record<ProviderEntryState, number>>;
}

export interface ProviderView extends Omit<ProviderSummary, 'tools' | 'entries'> {
  readonly spec: ProviderSpec;
  readonly tools: readonly ProviderToolView[];
  readonly entries: readonly ProviderEntryView[];
}

export interface RefreshReport {
  readonly provider: string;
  /** Tools listed for the first time at registration: unclassified, not offered. */
  readonly imported: readonly string[];
  /** New tools in a later listing: quarantined. */
  readonly added: readonly string[];
  /** Pinned tools whose definition changed: quarantined. */
  readonly changed: readonly string[];
  /** Tools an earlier listing dropped, listed again: quarantined (alerted `listed_again`). */
  readonly listed_again: readonly string[];
  /** Tools no longer listed: quarantined. */
  readonly removed: readonly string[];
  readonly unchanged: readonly string[];
  /** Listed tools never imported: no catalog name, the reserved `__`, a clash by case. */
  readonly skipped: readonly string[];
  /** The same, each with its reason. */
  readonly skipped_reasons: readonly SkippedName[];
  /** The same for resources, resource templates and prompts, each named `kind:key`. */
  readonly entries: EntryRefreshReport;
}

export interface ProviderServiceOptions {
  readonly onError?: (err: unknown) => void;
  readonly clock?: Clock;
  /** Egress rules of HTTP providers (tests: a resolver, test targets, a test CA). */
  readonly http?: CheckedFetchOptions;
}

const REFRESH_TIMEOUT_MS = 30_000;

export class ProviderService {
  readonly #store: Store;
  readonly #catalog: CatalogService;
  readonly #sandbox: Pick<SandboxService, 'start' | 'protectedPaths'>;
  readonly #clock: Clock;
  readonly #pool: UpstreamPool;
  readonly #onError: (err: unknown) => void;
  /** Specs the calls run under, kept until their stored rows change (provider-specs.ts). */
  readonly #specs: ProviderSpecs;
  readonly #refreshing = new Set<string>();
  readonly #entries: ProviderEntries;

  constructor(
    store: Store,
    catalog: CatalogService,
    sandbox: Pick<SandboxService, 'start' | 'protectedPaths'>,
    pool: UpstreamPool,
    options: ProviderServiceOptions = {},
  ) {
    this.#store = store;
    this.#catalog = catalog;
    this.#sandbox = sandbox;
    this.#clock = options.clock ?? systemClock;
    this.#pool = pool;
    this.#onError = options.onError ?? (() => {});
    this.#http = options.http ?? {};
    this.#entries = new ProviderEntries(store, catalog, this.#clock);
    // Processes started under a spec another process replaced must not serve calls under the new
    // one: closed as an update here closes them (saveIn).
    this.#specs = new ProviderSpecs(store.db, (name) => void pool.closeProvider(name));
  }

  readonly #http: CheckedFetchOptions;

  /** Live upstream processes (for tests and health). */
  get liveProcesses(): number {
    return this.#pool.size;
  }

  /** Registers or updates a provider, then imports its tools (one code path for CLI, REST, apply). */
  async register(
    input: unknown,
    actor: Actor,
  ): Promise<{ action: 'create' | 'update' | 'unchanged'; refresh: RefreshReport }> {
    const spec = normalizeProviderSpec(input);
    const action = await this.#catalog.write((ctx) => this.saveIn(ctx, spec, actor));
    const refresh = await this.refresh(spec.name, actor);
    return { action, refresh };
  }

  /** Stores a checked spec inside the caller's write (apply); the import runs after the commit. */
  async saveIn(
    ctx: CatalogWrite,
    input: unknown,
    actor: Actor,
  ): Promise<'create' | 'update' | 'unchanged'> {
    const spec = normalizeProviderSpec(input);
    // Refused at registration too, not only when the process would start.
    const exposed = providerPathProblems(this.#sandbox.protectedPaths, spec);
    if (exposed.length > 0) {
      throw new ToolgateError(
        'INPUT_INVALID',
        `provider spec refused: ${exposed[0]?.pointer} ${exposed[0]?.message}`,
        { problems: exposed },
      );
    }
    const json = canonicalJson(spec);
    const hash = `sha256:${sha256Hex(json)}`;
    const now = this.#clock();
    const at = now.toISOString();
    const existing = await ctx.trx
      .selectFrom('providers')
      .selectAll()
      .where('name', '=', spec.name)
      .executeTakeFirst();
    if (existing?.spec_hash === hash) return 'unchanged';
    if (existing) {
      await ctx.trx
        .updateTable('providers')
        .set({ spec: json, spec_hash: hash, updated_at: at })
        .where('name', '=', spec.name)
        .execute();
    } else {
      await ctx.trx
        .insertInto('providers')
        .values({
          name: spec.name,
          spec: json,
          spec_hash: hash,
          created_at: at,
          created_by: actor.id,
          updated_at: at,
          refreshed_at: null,
        })
        .execute();
    }
    // Another program behind it: its tools are refused until classified again (provider.changed).
    const launch = launchHash(spec);
    const changed = existing ? { launch_changed: storedLaunchHash(existing.spec) !== launch } : {};
    await appendEvent(ctx.trx, actor, now, {
      action: existing ? 'provider.updated' : 'provider.registered',
      subject: `provider:${spec.name}`,
      details: { spec_hash: hash, launch, ...changed },
    });
    this.#specs.drop(spec.name);
    // Processes started under the old spec must not serve calls under the new one.
    if (existing) void this.#pool.closeProvider(spec.name);
    // The revision moves with the spec, so every other process rechecks its specs (recheck).
    ctx.changed = true;
    return existing ? 'update' : 'create';
  }

  async list(): Promise<ProviderSummary[]> {
    const rows = await this.#store.db.selectFrom('providers').selectAll().orderBy('name').execute();
    const tools = await this.#store.db
      .selectFrom('provider_tools')
      .select(['provider', 'state'])
      .execute();
    const entries = await this.#entries.counts();
    return rows.map((row) => {
      const counts: Record<ProviderToolState, number> = {
        unclassified: 0,
        classified: 0,
        quarantined: 0,
        removed: 0,
      };
      for (const t of tools) {
        if (t.provider === row.name) counts[t.state as ProviderToolState] += 1;
      }
      const none = { unclassified: 0, classified: 0, quarantined: 0, removed: 0 };
      return { ...summaryOf(row), tools: counts, entries: entries.get(row.name) ?? none };
    });
  }

  async show(name: string): Promise<ProviderView> {
    const row = await this.#require(this.#store.db, name);
    const tools = await this.#store.db
      .selectFrom('provider_tools')
      .selectAll()
      .where('provider', '=', name)
      .orderBy('name')
      .execute();
    return {
      ...summaryOf(row),
      spec: JSON.parse(row.spec) as ProviderSpec,
      tools: tools.map(toolView),
      entries: await this.#entries.views(name),
    };
  }

  /**
   * Lists the provider's tools afresh (in a process of its own, closed after) and compares them
   * with the pins. Nothing is changed when the upstream cannot be listed.
   */
  async refresh(name: string, actor: Actor): Promise<RefreshReport> {
    const spec = await this.storedSpec(name);
    let listed: ListedTool[];
    let entries: ListedEntry[];
    try {
      const upstream = await openUpstream(() => this.launch(spec), REFRESH_TIMEOUT_MS);
      try {
        listed = upstream.tools.map((t) => ({
          name: t.name,
          ...(t.description !== undefined ? { description: t.description } : {}),
          inputSchema: t.inputSchema as JsonSchemaObject,
          ...(t.outputSchema !== undefined
            ? { outputSchema: t.outputSchema as JsonSchemaObject }
            : {}),
          pin: upstream.pins.get(t.name) ?? '',
        }));
        entries = await listEntries(upstream.client, REFRESH_TIMEOUT_MS);
      } finally {
        await upstream.client.close().catch(() => {});
        await upstream.link.close();
      }
    } catch (err) {
      this.#onError(err);
      throw new ToolgateError(
        'PROVIDER_UNAVAILABLE',
        `provider ${name} could not be started or listed`,
        {
          provider: name,
          reason: err instanceof ToolgateError ? err.message : 'start or listing failed',
        },
      );
    }
    const report = await this.#catalog.write((ctx) =>
      this.#compare(ctx, spec, listed, entries, actor),
    );
    // Processes that listed the old definitions would be refused at their next call anyway
    // (pin check); closing them makes the next call list afresh.
    const gone = (r: Pick<RefreshReport, 'changed' | 'listed_again' | 'removed'>) =>
      r.changed.length + r.listed_again.length + r.removed.length;
    if (gone(report) + gone(report.entries) > 0) await this.#pool.closeProvider(name);
    return report;
  }

  async #compare(
    ctx: CatalogWrite,
    spec: ProviderSpec,
    listed: readonly ListedTool[],
    entries: readonly ListedEntry[],
    actor: Actor,
  ): Promise<RefreshReport> {
    const { trx } = ctx;
    const now = this.#clock();
    const at = now.toISOString();
    const provider = await this.#require(trx, spec.name);
    const firstImport = provider.refreshed_at === null;
    const kind = toolKind(spec);
    const rows = new Map((await kind.rows(trx, spec.name)).map((r) => [r.label, r] as const));
    // Names that are no catalog names, hold the reserved `__`, or clash by case are skipped.
    const idOwner = new Map([...rows.values()].map((r) => [r.tool_id, r.label]));
    const { admitted, skipped } = admitListedTools(spec.name, listed, idOwner);
    const hooks: ChangeHooks = {
      quarantine: (c, toolId, reason) => this.#quarantineCatalog(c, toolId, actor, reason),
      alert: (t, subject, change, pinned, listedPin) =>
        this.#alert(t, actor, now, subject, change, pinned, listedPin),
    };
    const run = { firstImport, actor, now };
    const tools = await comparePinned(ctx, kind, spec.name, admitted, rows, run, hooks);
    const report: RefreshReport = {
      provider: spec.name,
      ...tools,
      skipped: skipped.map((x) => x.name),
      skipped_reasons: skipped,
      entries: await this.#entries.compareIn(
        ctx,
        spec,
        entries,
        firstImport,
        providerHosts(spec),
        actor,
        hooks,
      ),
    };
    await trx
      .updateTable('providers')
      .set({ refreshed_at: at })
      .where('name', '=', spec.name)
      .execute();
    await appendEvent(trx, actor, now, {
      action: 'provider.refreshed',
      subject: `provider:${spec.name}`,
      details: {
        imported: report.imported.length,
        added: report.added,
        changed: report.changed,
        listed_again: report.listed_again,
        removed: report.removed,
        unchanged: report.unchanged.length,
        skipped: report.skipped,
        skipped_reasons: report.skipped_reasons,
        // added, changed, removed and skipped listed; skipped_more, imported, unchanged counted.
        entries: {
          ...report.entries,
          imported: report.entries.imported.length,
          unchanged: report.entries.unchanged.length,
        },
      },
    });
    // Catalog listeners (gate caches, list_changed) see the refresh as a catalog change.
    ctx.changed = true;
    return report;
  }

  async #alert(
    trx: CatalogWrite['trx'],
    actor: Actor,
    now: Date,
    subject: string,
    change: ProviderChange,
    pinned: string | null,
    listed: string | null,
  ): Promise<void> {
    await appendEvent(trx, actor, now, {
      action: 'alert.provider_changed',
      subject,
      details: { change, pinned, listed, severity: 'high' },
    });
  }

  /** Quarantines every version of the tool still offered; each gets its own event. */
  async #quarantineCatalog(
    ctx: CatalogWrite,
    toolId: string,
    actor: Actor,
    reason: string,
  ): Promise<void> {
    const versions = await ctx.trx
      .selectFrom('tool_versions')
      .select(['version', 'quarantined'])
      .where('tool_id', '=', toolId)
      .execute();
    for (const v of versions) {
      if (v.quarantined === 1) continue;
      await this.#catalog.setQuarantineIn(ctx, toolId, v.version, actor, reason, true);
    }
  }

  /**
   * An admin's classification of one imported tool: registers the catalog entry `provider.tool`
   * (a new major version each time, pinned by `code_hash`) from the listing as pinned. The
   * catalog's own checks apply: a flagged description is quarantined, and an imported tool is
   * third-party code, so it is a draft until an approver records a security review of its
   * definition hash (then a privileged or irreversible class still waits for approvers).
   */
  async classify(name: string, tool: string, input: unknown, actor: Actor): Promise<Classified> {
    const classification = checkClassification(input);
    const spec = await this.storedSpec(name);
    return classifyPinned(
      this.#catalog,
      this.#clock,
      toolKind(spec),
      spec,
      tool,
      classification,
      actor,
    );
  }

  /**
   * An admin's classification of one imported resource, resource template or prompt (`kind`,
   * and its `key`: URI, URI template or name): registers its catalog entry, reviewed and
   * quarantined as an imported tool's is (provider-entries.ts).
   */
  async classifyEntry(
    name: string,
    kind: string,
    key: string,
    input: unknown,
    actor: Actor,
  ): ReturnType<ProviderEntries['classify']> {
    const spec = await this.storedSpec(name);
    if (!ENTRY_KINDS.includes(kind as EntryKind)) {
      throw new ToolgateError('INPUT_INVALID', `kind must be one of ${ENTRY_KINDS.join(', ')}`, {
        problems: [{ pointer: '/kind', message: 'unknown entry kind', rule: 'enum' }],
      });
    }
    return this.#entries.classify(spec, kind as EntryKind, key, input, actor);
  }

  /**
   * A call found that the upstream's listing changed under a running process: record it as a
   * refresh would (one at a time per provider, however many calls ran into it).
   */
  pinChanged(provider: string): void {
    if (this.#refreshing.has(provider)) return;
    this.#refreshing.add(provider);
    void this.refresh(provider, { id: 'system:provider-pin', via: 'system' })
      .catch(this.#onError)
      .finally(() => this.#refreshing.delete(provider));
  }

  /**
   * Opens one link to a provider: its process in the sandbox its spec names, or its URL under the
   * egress rules, the bytes charged to `meter` (the mcp runtime's, per gate session) when given.
   */
  async launch(spec: ProviderSpec, meter: EgressMeter | null = null): Promise<UpstreamLink> {
    if (spec.transport === 'http') {
      const url = spec.url ?? '';
      const http = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
      const transport = new http.StreamableHTTPClientTransport(new URL(url), {
        fetch: checkedFetch(url, this.#http, meter),
      });
      let ended: () => void = () => {};
      const done = new Promise<void>((resolve) => {
        ended = resolve;
      });
      transport.onclose = () => ended();
      return {
        transport,
        ended: done,
        close: async () => {
          await transport.terminateSession().catch(() => {});
          await transport.close();
          ended();
        },
      };
    }
    return processLink(await this.#start(spec));
  }

  #start(spec: ProviderSpec): Promise<SandboxProcess> {
    const bind = (b: { source: string; target?: string }) => ({
      source: b.source,
      target: b.target ?? b.source,
    });
    return this.#sandbox.start(spec.isolation, {
      argv: spec.command ?? [],
      // Only the spec's own variables: nothing of toolgate's environment reaches an upstream.
      env: { ...(spec.env ?? {}) },
      limits: { ...PROVIDER_LIMITS, ...(spec.limits ?? {}) },
      binds: (spec.binds ?? []).map(bind),
      ...(spec.workspace ? { writableBinds: [bind(spec.workspace)] } : {}),
    });
  }

  /**
   * The spec calls run under: read once, kept until its stored row changes (here at once, in
   * another process once `recheck` ran); rejects when the provider is unknown.
   */
  spec(name: string): Promise<ProviderSpec> {
    return this.#specs.get(name);
  }

  /** The spec as stored now (administration and probes: what classify binds, refresh lists). */
  async storedSpec(name: string): Promise<ProviderSpec> {
    return JSON.parse((await this.#require(this.#store.db, name)).spec) as ProviderSpec;
  }

  /**
   * The catalog revision moved (the gate's revision watch awaits this): a kept spec another process
   * replaced is dropped and its processes closed, so the next call runs under the stored one.
   */
  recheck(): Promise<void> {
    return this.#specs.recheck();
  }

  #require(
    db: Pick<Store['db'], 'selectFrom'> | CatalogWrite['trx'],
    name: string,
  ): Promise<ProviderRow> {
    return providerRow(db as Store['db'], name);
  }
}

/** A provider's tools as one kind of pinned listing (pinned-listing.ts), keyed by name. */
function toolKind(spec: ProviderSpec): PinnedKind<ListedTool, string, ToolClassification> {
  const pinnedRow = (r: ProviderToolRow): PinnedRow => ({
    label: r.name,
    pin_hash: r.pin_hash,
    state: r.state,
    tool_id: r.tool_id,
    listing: r.listing,
    findings: r.findings,
  });
  return {
    noun: 'tool',
    rows: async (trx, provider) =>
      (
        await trx
          .selectFrom('provider_tools')
          .selectAll()
          .where('provider', '=', provider)
          .execute()
      ).map(pinnedRow),
    row: async (trx, provider, name) => {
      const r = await trx
        .selectFrom('provider_tools')
        .selectAll()
        .where('provider', '=', provider)
        .where('name', '=', name)
        .executeTakeFirst();
      return r ? pinnedRow(r) : undefined;
    },
    labelOf: (tool) => tool.name,
    keyOfLabel: (label) => label,
    subject: (provider, name) => `provider:${provider}/${name}`,
    pin: (tool) => tool.pin,
    scan: (tool) => [
      ...scanListedTool(tool, providerHosts(spec), spec.doc_hosts ?? []),
      ...patternFindings(tool),
    ],
    toolId: (provider, tool) => `${provider}.${tool.name.toLowerCase()}`,
    // A tool is offered only once classified; the catalog's own scan judges its definition then.
    fresh: (firstImport) => ({
      state: firstImport ? 'unclassified' : 'quarantined',
      reason: firstImport ? null : 'added after registration',
    }),
    details: () => ({}),
    insert: async (trx, provider, tool, f, at) => {
      await trx
        .insertInto('provider_tools')
        .values({
          provider,
          name: tool.name,
          ...f,
          classification: null,
          tool_version: null,
          updated_at: at,
        })
        .execute();
    },
    update: async (trx, provider, name, set) => {
      await trx
        .updateTable('provider_tools')
        .set(set)
        .where('provider', '=', provider)
        .where('name', '=', name)
        .execute();
    },
    missing: (provider, tool, state) =>
      new ToolgateError(
        'PROVIDER_TOOL_STATE',
        `provider ${provider} does not list a tool ${tool}`,
        {
          provider,
          tool,
          state,
        },
      ),
    definition: (s, row, version, c) =>
      importedDefinition(s, row.tool_id, version, JSON.parse(row.listing) as ListedTool, c),
    keepsFlaggedQuarantined: false,
    classifiedDetails: (_name, c, ref) => ({
      tool: ref.tool,
      pin: ref.pin,
      action_class: c.action_class,
      data_access: c.data_access,
      egress: c.egress.mode,
      access_tier: c.access_tier,
    }),
  };
}

function summaryOf(row: ProviderRow): Omit<ProviderSummary, 'tools' | 'entries'> {
  const spec = JSON.parse(row.spec) as ProviderSpec;
  return {
    name: row.name,
    owner: spec.owner,
    transport: spec.transport,
    isolation: spec.isolation,
    refreshed_at: row.refreshed_at,
  };
}

function toolView(row: ProviderToolRow): ProviderToolView {
  const listed = JSON.parse(row.listing) as ListedTool;
  return {
    name: row.name,
    tool_id: row.tool_id,
    state: row.state as ProviderToolState,
    reason: row.reason,
    pin_hash: row.pin_hash,
    findings: JSON.parse(row.findings) as ScanFinding[],
    classification: row.classification
      ? (JSON.parse(row.classification) as ToolClassification)
      : null,
    tool_version: row.tool_version,
    description: listed.description ?? null,
  };
}
