/**
 * @module An upstream provider's resources, resource templates and prompts, governed as its tools
 * are (C3, C15; docs/architecture.md §6): each listed entry is pinned by the hash of its canonical
 * definition and scanned for poisoning; it stays unoffered until an admin classifies it, which
 * registers a catalog entry `provider.resource|template|prompt.slug` whose mcp runtime names the
 * entry, so a `resources/read` or `prompts/get` is a gate call like any other. A later listing
 * that changes, adds or drops one quarantines it with an alert, as for tools: by the same
 * machinery (pinned-listing.ts); here is only what differs for entries (their table, ids, scan,
 * definitions, that a flagged entry stays quarantined after classification, the caps on a
 * provider's templates, and the alert when a listing makes templates listed before share URIs
 * with another (template-shadows.ts).
 */

import { type Actor, type Clock, sha256Hex, ToolgateError } from '../../core/index.js';
import {
  type CatalogService,
  type CatalogWrite,
  type McpEntry,
  type ScanFinding,
  scanToolText,
  templateVariables,
} from '../../domain/catalog/index.js';
import {
  type GovernedUriEntry,
  providerOf,
  readGovernedEntries,
  shadowedTemplates,
  type TemplateShadow,
} from '../../domain/sessions/index.js';
import { appendEvent, type ProviderEntryRow, type Store } from '../../records/store/index.js';
import { checkEntryClassification, type EntryClassification } from './entry-classification.js';
import { admitListedEntries, type SkippedName } from './listed-names.js';
import {
  type ChangeHooks,
  type Classified,
  classifyPinned,
  comparePinned,
  type PinnedKind,
  type PinnedRow,
  type PinnedState,
} from './pinned-listing.js';
import { launchHash, type ProviderSpec } from './provider-spec.js';
import { type EntryKind, entryPinOf, type ListedEntry } from './upstream-entries.js';

export type ProviderEntryState = PinnedState;

export interface ProviderEntryView {
  readonly kind: EntryKind;
  /** A resource's URI, a template's URI template, a prompt's name. */
  readonly key: string;
  readonly name: string;
  readonly tool_id: string;
  readonly state: ProviderEntryState;
  readonly reason: string | null;
  readonly pin_hash: string;
  readonly findings: readonly ScanFinding[];
  readonly classification: EntryClassification | null;
  readonly tool_version: string | null;
  readonly description: string | null;
}

/** What a refresh did to the entries, each named `kind:key`. */
export interface EntryRefreshReport {
  readonly imported: readonly string[];
  readonly added: readonly string[];
  readonly changed: readonly string[];
  /** Entries an earlier listing dropped, listed again: quarantined (alerted `listed_again`). */
  readonly listed_again: readonly string[];
  readonly removed: readonly string[];
  readonly unchanged: readonly string[];
  /** Prompts never imported, as `prompt:NAME`: their names hold the reserved `__`. */
  readonly skipped: readonly SkippedName[];
  /** Listed entries past the listing's caps (count, key length), counted rather than listed. */
  readonly skipped_more: number;
}

/** What the provider service lends the entries for a change: the same quarantine and alert. */
export type EntryChangeHooks = ChangeHooks;

const DEFAULT_WALL_MS = 10_000;
const SEGMENT: Readonly<Record<EntryKind, string>> = {
  resource: 'resource',
  resource_template: 'template',
  prompt: 'prompt',
};
/**
 * What one provider's resource templates may be (attack round 10 F2): each is compared with every
 * other listed template on the event loop (template-shadows.ts), so a listing of many long
 * templates of many expressions is refused beyond these, template by template, with the reason.
 */
const MAX_TEMPLATES = 100;
const MAX_TEMPLATE_CHARS = 512;
const MAX_TEMPLATE_EXPRESSIONS = 10;
/** Templates an alert names in `details.by` (the rest counted in `by_more`). */
const MAX_NAMED_BY = 20;

/** Why a listed resource template is not imported (beyond admitListedEntries' caps), or null. */
function templateProblem(entry: ListedEntry, templates: number): string | null {
  if (entry.kind !== 'resource_template') return null;
  if (templates >= MAX_TEMPLATES) {
    return `more than ${MAX_TEMPLATES} resource templates listed; the rest are not imported`;
  }
  if (entry.key.length > MAX_TEMPLATE_CHARS) {
    return `a resource template longer than ${MAX_TEMPLATE_CHARS} characters`;
  }
  const expressions = entry.key.split('{').length - 1;
  const variables = templateVariables(entry.key).length;
  if (expressions > MAX_TEMPLATE_EXPRESSIONS || variables > MAX_TEMPLATE_EXPRESSIONS) {
    return `a resource template with more than ${MAX_TEMPLATE_EXPRESSIONS} expressions or variables`;
  }
  return null;
}

/**
 * The catalog id of an entry: the provider, its kind, a readable slug of its name and a hash of
 * its key, so two entries never share an id and none can take a tool's (tool ids have two parts).
 */
export function entryToolId(provider: string, kind: EntryKind, key: string, name: string): string {
  const slug =
    name
      .toLowerCase()
      .replace(/[^a-z0-9_-]+/g, '-')
      .replace(/^[^a-z]+/, '')
      .slice(0, 40) || 'entry';
  const hash = sha256Hex(`${kind}\u0000${key}`).slice(0, 8);
  return `${provider}.${SEGMENT[kind]}.${slug}-${hash}`;
}

function subjectOf(provider: string, kind: EntryKind, key: string): string {
  return `provider:${provider}/${kind}:${key}`;
}

/** The poisoning scan of one entry, over every text of it a model or client is shown. */
export function scanEntry(entry: ListedEntry, ownHosts: readonly string[]): ScanFinding[] {
  const extraTexts = [
    ...(entry.title !== undefined ? [{ field: '/title', text: entry.title }] : []),
    ...(entry.arguments ?? []).flatMap((a, i) => [
      { field: `/arguments/${i}/name`, text: a.name, kind: 'key' as const },
      ...(a.description !== undefined
        ? [{ field: `/arguments/${i}/description`, text: a.description }]
        : []),
    ]),
  ];
  return scanToolText({
    name: entry.name,
    description: entry.description ?? '',
    extraTexts,
    ownHosts,
  });
}

export class ProviderEntries {
  readonly #store: Store;
  readonly #catalog: CatalogService;
  readonly #clock: Clock;

  constructor(store: Store, catalog: CatalogService, clock: Clock) {
    this.#store = store;
    this.#catalog = catalog;
    this.#clock = clock;
  }

  async views(provider: string): Promise<ProviderEntryView[]> {
    const rows = await this.#store.db
      .selectFrom('provider_entries')
      .selectAll()
      .where('provider', '=', provider)
      .orderBy('kind')
      .orderBy('key')
      .execute();
    return rows.map(entryView);
  }

  /** Counts by state, per provider (the providers list). */
  async counts(): Promise<Map<string, Record<ProviderEntryState, number>>> {
    const rows = await this.#store.db
      .selectFrom('provider_entries')
      .select(['provider', 'state'])
      .execute();
    const out = new Map<string, Record<ProviderEntryState, number>>();
    for (const r of rows) {
      const c = out.get(r.provider) ?? {
        unclassified: 0,
        classified: 0,
        quarantined: 0,
        removed: 0,
      };
      c[r.state as ProviderEntryState] += 1;
      out.set(r.provider, c);
    }
    return out;
  }

  /**
   * Compares a fresh listing with the pins, inside the refresh's write (pinned-listing.ts). On
   * the first import an entry is unclassified (quarantined at once when the scan flags it);
   * later, anything new, changed or gone is quarantined and alerted.
   */
  async compareIn(
    ctx: CatalogWrite,
    spec: ProviderSpec,
    listed: readonly ListedEntry[],
    firstImport: boolean,
    ownHosts: readonly string[],
    actor: Actor,
    hooks: EntryChangeHooks,
  ): Promise<EntryRefreshReport> {
    const kind = entryKind(ownHosts);
    const rows = new Map((await kind.rows(ctx.trx, spec.name)).map((r) => [r.label, r] as const));
    // Each entry once, so many and no key longer than the caps; a prompt's name without `__`
    // and not another's in another case (docs/tools-and-catalog.md, "Names the model sees"); a
    // resource template within the templates' caps. Each skipped one is reported with the reason.
    const once = admitListedEntries(listed);
    const admitted: ListedEntry[] = [];
    const skipped: SkippedName[] = [...once.skipped];
    let templates = 0;
    for (const entry of once.admitted) {
      const problem = templateProblem(entry, templates);
      if (problem !== null) skipped.push({ name: `${entry.kind}:${entry.key}`, reason: problem });
      else admitted.push(entry);
      if (problem === null && entry.kind === 'resource_template') templates += 1;
    }
    const beforeEntries = await readGovernedEntries(ctx.trx);
    const before = shadowedTemplates(beforeEntries);
    const report = await comparePinned(
      ctx,
      kind,
      spec.name,
      admitted,
      rows,
      { firstImport, actor, now: this.#clock() },
      hooks,
    );
    const afterEntries = await readGovernedEntries(ctx.trx);
    const after = shadowedTemplates(afterEntries);
    // Templates this listing brought (a changed key is a new id): withheld, they are never
    // offered yet; the templates listed before that now share URIs with them are alerted.
    const listedBefore = new Set(beforeEntries.filter((e) => e.listed).map((e) => e.id));
    const fresh = new Set(
      afterEntries
        .filter((e) => e.listed && providerOf(e.id) === spec.name && !listedBefore.has(e.id))
        .map((e) => e.id),
    );
    for (const [id, shadow] of after) {
      if (fresh.has(id)) continue;
      const had = new Set(before.get(id)?.by.map((e) => e.id) ?? []);
      const added = shadow.by.filter((e) => !had.has(e.id));
      if (added.length === 0) continue;
      const cause = added.find((e) => fresh.has(e.id)) ?? added[0] ?? shadow.by[0];
      if (cause) await this.#alertShadow(ctx, id, shadow, cause, actor);
    }
    return { ...report, skipped, skipped_more: once.more };
  }

  /**
   * A template listed before that now shares URIs with another (docs/security-model.md
   * "Resources and templates: one URI, one governed thing"; attack round 10 F4): no session is
   * offered it from now on, so an operator is told which template lost URIs (`shadowed`) and
   * which listing caused it (the subject, `provider` and `template`), as for
   * `alert.provider_changed`.
   */
  async #alertShadow(
    ctx: CatalogWrite,
    id: string,
    shadow: TemplateShadow,
    cause: GovernedUriEntry,
    actor: Actor,
  ): Promise<void> {
    const provider = providerOf(cause.id);
    await appendEvent(ctx.trx, actor, this.#clock(), {
      action: 'alert.template_shadowed',
      subject: subjectOf(provider, 'resource_template', cause.key),
      details: {
        provider,
        template: cause.key,
        shadowed: { provider: providerOf(id), template: shadow.template, tool_id: id },
        by: shadow.by
          .slice(0, MAX_NAMED_BY)
          .map((e) => ({ provider: providerOf(e.id), template: e.key })),
        ...(shadow.by.length > MAX_NAMED_BY ? { by_more: shadow.by.length - MAX_NAMED_BY } : {}),
        ...(shadow.undecided ? { undecided: true } : {}),
        severity: 'high',
      },
    });
  }

  /**
   * An admin's classification of one imported entry: registers its catalog entry from the
   * listing as pinned (pinned-listing.ts). The catalog's checks apply as for an imported tool:
   * third-party, so a draft until an approver reviews its hash; and an entry the import scan
   * flagged stays quarantined whatever the catalog's own scan says.
   */
  classify(
    spec: ProviderSpec,
    kind: EntryKind,
    key: string,
    input: unknown,
    actor: Actor,
  ): Promise<Classified> {
    const classification = checkEntryClassification(input);
    return classifyPinned(
      this.#catalog,
      this.#clock,
      entryKind([]),
      spec,
      { kind, key },
      classification,
      actor,
    );
  }
}

type EntryKey = { readonly kind: EntryKind; readonly key: string };

/** A provider's resources, resource templates and prompts as one kind of pinned listing. */
function entryKind(
  ownHosts: readonly string[],
): PinnedKind<ListedEntry, EntryKey, EntryClassification> {
  const pinnedRow = (r: ProviderEntryRow): PinnedRow => ({
    label: `${r.kind}:${r.key}`,
    pin_hash: r.pin_hash,
    state: r.state,
    tool_id: r.tool_id,
    listing: r.listing,
    findings: r.findings,
  });
  return {
    noun: 'entry',
    rows: async (trx, provider) =>
      (
        await trx
          .selectFrom('provider_entries')
          .selectAll()
          .where('provider', '=', provider)
          .execute()
      ).map(pinnedRow),
    row: async (trx, provider, k) => {
      const r = await trx
        .selectFrom('provider_entries')
        .selectAll()
        .where('provider', '=', provider)
        .where('kind', '=', k.kind)
        .where('key', '=', k.key)
        .executeTakeFirst();
      return r ? pinnedRow(r) : undefined;
    },
    labelOf: (entry) => `${entry.kind}:${entry.key}`,
    keyOfLabel: (label) => {
      const at = label.indexOf(':');
      return { kind: label.slice(0, at) as EntryKind, key: label.slice(at + 1) };
    },
    subject: (provider, k) => subjectOf(provider, k.kind, k.key),
    pin: entryPinOf,
    scan: (entry) => scanEntry(entry, ownHosts),
    toolId: (provider, entry) => entryToolId(provider, entry.kind, entry.key, entry.name),
    fresh: (firstImport, findings) => {
      const flagged = findings.length > 0;
      return {
        state: firstImport && !flagged ? 'unclassified' : 'quarantined',
        reason: !firstImport
          ? 'added after registration'
          : flagged
            ? 'flagged by the description scan'
            : null,
      };
    },
    details: (k) => ({ kind: k.kind }),
    insert: async (trx, provider, entry, f, at) => {
      await trx
        .insertInto('provider_entries')
        .values({
          provider,
          kind: entry.kind,
          key: entry.key,
          ...f,
          classification: null,
          tool_version: null,
          updated_at: at,
        })
        .execute();
    },
    update: async (trx, provider, k, set) => {
      await trx
        .updateTable('provider_entries')
        .set(set)
        .where('provider', '=', provider)
        .where('kind', '=', k.kind)
        .where('key', '=', k.key)
        .execute();
    },
    missing: (provider, k, state) =>
      new ToolgateError(
        'PROVIDER_ENTRY_STATE',
        `provider ${provider} does not list a ${k.kind} ${k.key}`,
        { provider, kind: k.kind, key: k.key, state },
      ),
    definition: (spec, row, version, c) =>
      entryDefinition(
        spec,
        row.tool_id,
        version,
        JSON.parse(row.listing) as ListedEntry,
        row.pin_hash,
        c,
      ),
    keepsFlaggedQuarantined: true,
    classifiedDetails: (k, c, ref) => ({
      kind: k.kind,
      tool: ref.tool,
      pin: ref.pin,
      data_access: c.data_access,
      access_tier: c.access_tier,
    }),
  };
}

function entryView(row: ProviderEntryRow): ProviderEntryView {
  const listed = JSON.parse(row.listing) as ListedEntry;
  return {
    kind: row.kind as EntryKind,
    key: row.key,
    name: listed.name,
    tool_id: row.tool_id,
    state: row.state as ProviderEntryState,
    reason: row.reason,
    pin_hash: row.pin_hash,
    findings: JSON.parse(row.findings) as ScanFinding[],
    classification: row.classification
      ? (JSON.parse(row.classification) as EntryClassification)
      : null,
    tool_version: row.tool_version,
    description: listed.description ?? null,
  };
}

const ARGUMENT_MAX_CHARS = 65_536;
const URI_VARIABLE_MAX_CHARS = 1024;

/** The arguments a gated read takes: a template's variables, a prompt's arguments, else none. */
function entryInputSchema(listed: ListedEntry): Record<string, unknown> {
  const properties: Record<string, Record<string, unknown>> = {};
  const required: string[] = [];
  if (listed.kind === 'resource_template') {
    for (const v of templateVariables(listed.key)) {
      properties[v] = { type: 'string', maxLength: URI_VARIABLE_MAX_CHARS };
    }
  }
  if (listed.kind === 'prompt') {
    for (const a of listed.arguments ?? []) {
      properties[a.name] = {
        type: 'string',
        maxLength: ARGUMENT_MAX_CHARS,
        ...(a.description !== undefined ? { description: a.description } : {}),
      };
      if (a.required === true) required.push(a.name);
    }
  }
  return {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

function mcpEntry(listed: ListedEntry): McpEntry {
  const title = listed.title !== undefined ? { title: listed.title.slice(0, 256) } : {};
  const mime = listed.mimeType !== undefined ? { mime_type: listed.mimeType.slice(0, 256) } : {};
  const name = listed.name.slice(0, 256);
  switch (listed.kind) {
    case 'resource':
      return { kind: 'resource', name, uri: listed.key, ...title, ...mime };
    case 'resource_template':
      return { kind: 'resource_template', name, uri_template: listed.key, ...title, ...mime };
    case 'prompt':
      return {
        kind: 'prompt',
        name,
        ...title,
        arguments: (listed.arguments ?? []).map((a) => ({
          name: a.name,
          ...(a.description !== undefined ? { description: a.description } : {}),
          ...(a.required === true ? { required: true } : {}),
        })),
      };
  }
}

/** The catalog definition of an imported entry under an admin's classification. */
export function entryDefinition(
  spec: ProviderSpec,
  toolId: string,
  version: string,
  listed: ListedEntry,
  pin: string,
  c: EntryClassification,
): Record<string, unknown> {
  const slug = toolId.split('.').at(-1) ?? 'entry';
  const description =
    (listed.description ?? '').trim() || `${listed.kind} ${listed.name} (from ${spec.name})`;
  return {
    id: toolId,
    version,
    name: slug,
    description: description.slice(0, 4096),
    tags: [
      'mcp',
      spec.name,
      listed.kind,
      ...(c.tags ?? []).filter((t) => t !== 'mcp' && t !== spec.name && t !== listed.kind),
    ],
    owner: spec.owner,
    input_schema: entryInputSchema(listed),
    output_schema: { type: 'object', 'x-toolgate': 'unstructured' },
    action_class: 'read',
    data_access: c.data_access,
    egress: { mode: 'none' },
    access_tier: c.access_tier,
    required_capabilities: [...c.required_capabilities],
    sandbox: {
      isolation: spec.isolation,
      limits: { wall_time_ms: c.wall_time_ms ?? DEFAULT_WALL_MS },
    },
    runtime: {
      kind: 'mcp',
      provider: spec.name,
      tool: slug,
      entry: mcpEntry(listed),
      launch: launchHash(spec),
    },
    provenance: 'third_party',
    code_hash: pin,
  };
}
