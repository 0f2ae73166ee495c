/**
 * @module The one import, pin, classify and quarantine machinery of an upstream provider's
 * listings (C3, C15; docs/architecture.md §6), parameterised by what is listed: its tools
 * (provider-service.ts) or its resources, resource templates and prompts (provider-entries.ts).
 * Every listed item is pinned by a hash of its definition and scanned for poisoning; it stays
 * unoffered until an admin classifies it, which registers a catalog entry (a new major version
 * each time, pinned by `code_hash`). A later listing that changes a pinned item (a rug pull), adds
 * one, drops one or lists again one it dropped quarantines it, records an event and raises
 * `alert.provider_changed`.
 */
import type { Actor, ToolgateError } from '../../core/index.js';
import type {
  CatalogService,
  CatalogWrite,
  ScanFinding,
  ToolVersionDetail,
} from '../../domain/catalog/index.js';
import { appendEvent } from '../../records/store/index.js';
import { nextMajorVersion } from './next-version.js';
import type { ProviderSpec } from './provider-spec.js';

export type PinnedState = 'unclassified' | 'classified' | 'quarantined' | 'removed';

/** One stored item of a listing, whatever its kind. */
export interface PinnedRow {
  /** What reports name it by: a tool's name, `kind:key` for an entry. */
  readonly label: string;
  readonly pin_hash: string;
  readonly state: string;
  readonly tool_id: string;
  readonly listing: string;
  readonly findings: string;
}

/** What a refresh did to one kind's items, each named by its label. */
export interface PinnedReport {
  readonly imported: string[];
  readonly added: string[];
  readonly changed: string[];
  /** Items removed by an earlier listing and listed again: quarantined, whatever their hash. */
  readonly listed_again: string[];
  readonly removed: string[];
  readonly unchanged: string[];
}

/** The fields a refresh writes when it pins an item afresh. */
export interface PinFields {
  readonly pin_hash: string;
  readonly listing: string;
  readonly state: PinnedState;
  readonly reason: string | null;
  readonly findings: string;
}

/** What a refresh or a classification writes on a stored item. */
export type PinnedUpdate = Partial<PinFields & ClassifiedFields> & { readonly updated_at: string };

/** The fields a classification writes. */
export interface ClassifiedFields {
  readonly state: PinnedState;
  readonly reason: string | null;
  readonly classification: string;
  readonly tool_version: string;
}

/**
 * What differs between a provider's tools and its entries: where their rows live, how an item is
 * named, pinned, scanned and defined, and the words of their events. The machinery is the same.
 */
export interface PinnedKind<Item, Key, C> {
  /** `tool` or `entry`: the event actions are `provider.<noun>_imported`, `…_classified`. */
  readonly noun: 'tool' | 'entry';
  rows(trx: CatalogWrite['trx'], provider: string): Promise<PinnedRow[]>;
  row(trx: CatalogWrite['trx'], provider: string, key: Key): Promise<PinnedRow | undefined>;
  labelOf(item: Item): string;
  keyOfLabel(label: string): Key;
  subject(provider: string, key: Key): string;
  pin(item: Item): string;
  scan(item: Item): ScanFinding[];
  toolId(provider: string, item: Item): string;
  /** State and reason of an item first seen: by the import's rules, the scan's findings. */
  fresh(
    firstImport: boolean,
    findings: readonly ScanFinding[],
  ): {
    readonly state: PinnedState;
    readonly reason: string | null;
  };
  /** Event details besides pin, state and findings (an entry's kind). */
  details(key: Key): Record<string, unknown>;
  insert(
    trx: CatalogWrite['trx'],
    provider: string,
    item: Item,
    f: PinFields & { readonly tool_id: string },
    at: string,
  ): Promise<void>;
  /** Writes `set` on the stored item `key` (pinned afresh, removed, classified). */
  update(trx: CatalogWrite['trx'], provider: string, key: Key, set: PinnedUpdate): Promise<void>;
  /** The refusal when the provider does not list `key` (never listed, or removed). */
  missing(provider: string, key: Key, state: string | null): ToolgateError;
  /** The catalog definition of an item as pinned, under an admin's classification. */
  definition(spec: ProviderSpec, row: PinnedRow, version: string, c: C): Record<string, unknown>;
  /**
   * Whether an item the import scan flagged stays quarantined after classification whatever the
   * catalog's own scan says (entries); tools rest on the catalog's scan of their definition.
   */
  readonly keepsFlaggedQuarantined: boolean;
  /** The classification event's details, with the tool reference and pin given. */
  classifiedDetails(
    key: Key,
    c: C,
    ref: { readonly tool: string; readonly pin: string },
  ): Record<string, unknown>;
}

/** What an `alert.provider_changed` says happened to one item. */
export type ProviderChange = 'added' | 'changed' | 'listed_again' | 'removed';

/** What the provider service lends for a change: the same quarantine and alert for every kind. */
export interface ChangeHooks {
  quarantine(ctx: CatalogWrite, toolId: string, reason: string): Promise<void>;
  alert(
    trx: CatalogWrite['trx'],
    subject: string,
    change: ProviderChange,
    pinned: string | null,
    listed: string | null,
  ): Promise<void>;
}

export function emptyReport(): PinnedReport {
  return { imported: [], added: [], changed: [], listed_again: [], removed: [], unchanged: [] };
}

/**
 * Compares a fresh listing with the pins, inside the refresh's write. `listed` holds the items
 * admitted (each label once); a stored item not among them is gone. On the first import an item
 * takes the kind's fresh state; later, anything new, changed or gone is quarantined and alerted.
 */
export async function comparePinned<Item, Key, C>(
  ctx: CatalogWrite,
  kind: PinnedKind<Item, Key, C>,
  provider: string,
  listed: readonly Item[],
  rows: ReadonlyMap<string, PinnedRow>,
  run: { readonly firstImport: boolean; readonly actor: Actor; readonly now: Date },
  hooks: ChangeHooks,
): Promise<PinnedReport> {
  const { trx } = ctx;
  const { firstImport, actor, now } = run;
  const at = now.toISOString();
  const report = emptyReport();
  const seen = new Set<string>();
  for (const item of listed) {
    const label = kind.labelOf(item);
    seen.add(label);
    const key = kind.keyOfLabel(label);
    const pin = kind.pin(item);
    const row = rows.get(label);
    if (row && row.pin_hash === pin && row.state !== 'removed') {
      report.unchanged.push(label);
      continue;
    }
    const findings = kind.scan(item);
    const listing = JSON.stringify(item);
    const subject = kind.subject(provider, key);
    if (!row) {
      const { state, reason } = kind.fresh(firstImport, findings);
      const fields = { pin_hash: pin, listing, state, reason, findings: JSON.stringify(findings) };
      await kind.insert(
        trx,
        provider,
        item,
        { ...fields, tool_id: kind.toolId(provider, item) },
        at,
      );
      await appendEvent(trx, actor, now, {
        action: `provider.${kind.noun}_imported`,
        subject,
        details: { ...kind.details(key), pin, state, findings: findings.length },
      });
      if (firstImport) report.imported.push(label);
      else {
        report.added.push(label);
        await hooks.alert(trx, subject, 'added', null, pin);
      }
      continue;
    }
    const again = row.state === 'removed';
    const reason = again ? 'listed again after removal' : 'definition changed';
    await kind.update(trx, provider, key, {
      pin_hash: pin,
      listing,
      state: 'quarantined',
      reason,
      findings: JSON.stringify(findings),
      updated_at: at,
    });
    await hooks.quarantine(ctx, row.tool_id, `upstream ${reason}`);
    // An item back after removal is reported as such, whether or not its definition changed.
    (again ? report.listed_again : report.changed).push(label);
    await hooks.alert(trx, subject, again ? 'listed_again' : 'changed', row.pin_hash, pin);
  }
  for (const [label, row] of rows) {
    if (seen.has(label) || row.state === 'removed') continue;
    const key = kind.keyOfLabel(label);
    await kind.update(trx, provider, key, {
      state: 'removed',
      reason: 'no longer listed',
      updated_at: at,
    });
    await hooks.quarantine(ctx, row.tool_id, 'upstream no longer lists it');
    report.removed.push(label);
    await hooks.alert(trx, kind.subject(provider, key), 'removed', row.pin_hash, null);
  }
  return report;
}

export interface Classified {
  tool: ToolVersionDetail;
  changeId?: string;
  review?: { readonly id: string; readonly reasons: readonly string[] };
}

/**
 * An admin's classification of one listed item: registers its catalog entry from the listing as
 * pinned. The catalog's checks apply as for any imported definition: third-party, so a draft
 * until an approver reviews its hash.
 */
export function classifyPinned<Item, Key, C>(
  catalog: CatalogService,
  clock: () => Date,
  kind: PinnedKind<Item, Key, C>,
  spec: ProviderSpec,
  key: Key,
  classification: C,
  actor: Actor,
): Promise<Classified> {
  return catalog.write(async (ctx) => {
    const { trx } = ctx;
    const row = await kind.row(trx, spec.name, key);
    if (!row || row.state === 'removed') throw kind.missing(spec.name, key, row?.state ?? null);
    const version = await nextMajorVersion(trx, row.tool_id);
    const definition = kind.definition(spec, row, version, classification);
    const registered = await catalog.registerIn(ctx, definition, actor);
    const flagged =
      kind.keepsFlaggedQuarantined && (JSON.parse(row.findings) as ScanFinding[]).length > 0;
    let tool = registered.tool;
    if (flagged && !tool.quarantined) {
      await catalog.setQuarantineIn(
        ctx,
        row.tool_id,
        tool.version,
        actor,
        'flagged by the description scan at import',
        true,
      );
      tool = { ...tool, quarantined: true };
    }
    const now = clock();
    await kind.update(trx, spec.name, key, {
      state: flagged ? 'quarantined' : 'classified',
      reason: flagged ? 'flagged by the description scan' : null,
      classification: JSON.stringify(classification),
      tool_version: tool.version,
      updated_at: now.toISOString(),
    });
    await appendEvent(trx, actor, now, {
      action: `provider.${kind.noun}_classified`,
      subject: kind.subject(spec.name, key),
      details: kind.classifiedDetails(key, classification, {
        tool: `${row.tool_id}@${tool.version}`,
        pin: row.pin_hash,
      }),
    });
    return {
      tool,
      ...(registered.changeId !== undefined ? { changeId: registered.changeId } : {}),
      ...(registered.review !== undefined ? { review: registered.review } : {}),
    };
  });
}
