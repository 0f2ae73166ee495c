/**
 * @module Which one governed thing a resource URI names (docs/security-model.md "Resources and
 * templates: one URI, one governed thing"): resolved over every resource and resource template
 * any provider lists (whatever its state, whoever is offered it), never over the caller's offered
 * set alone, so a broad template can never read what a static resource or another provider's
 * template governs. A URI that names a static resource is that resource; otherwise it is the one
 * template that matches it; anything else (two different templates, a spelling whose canonical
 * form is a static's, a dot segment, userinfo in the authority) names nothing. Identical entries
 * of several providers are copies: the URI names the caller's own. The caller checks the answer
 * against what it is offered. A template that may share a URI with another is not offered at all
 * (template-shadows.ts).
 */

import type { Store } from '../../records/store/index.js';
import { expandTemplate, type McpEntry, matchTemplate } from '../catalog/index.js';

/** One governed resource or resource template: its catalog id and its URI or URI template. */
export interface GovernedUriEntry {
  readonly id: string;
  readonly kind: 'resource' | 'resource_template';
  readonly key: string;
  /** False for a template no longer listed upstream: its catalog entry is quarantined. */
  readonly listed: boolean;
}

/** The one thing a URI names: a static resource, or a template and the arguments it binds. */
export type GovernedRead =
  | { readonly kind: 'resource'; readonly id: string }
  | {
      readonly kind: 'resource_template';
      readonly id: string;
      readonly args: Record<string, string>;
    };

/** The governed entry an offered or called catalog entry is, or null for a prompt or a tool. */
export function governedEntryOf(id: string, entry: McpEntry | undefined): GovernedUriEntry | null {
  if (entry?.kind === 'resource') return { id, kind: 'resource', key: entry.uri, listed: true };
  if (entry?.kind === 'resource_template') {
    return { id, kind: 'resource_template', key: entry.uri_template, listed: true };
  }
  return null;
}

const MAX_DECODE_ROUNDS = 4;

/** Every run of escapes decoded as UTF-8, or byte by byte where it is not UTF-8. */
function decodeEscapes(s: string): string {
  let out = s;
  for (let i = 0; i < MAX_DECODE_ROUNDS && /%[0-9a-f]{2}/i.test(out); i += 1) {
    out = out.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run.replace(/%([0-9a-f]{2})/gi, (_, hex: string) =>
          String.fromCharCode(Number.parseInt(hex, 16)),
        );
      }
    });
  }
  return out;
}

/** Compatibility forms folded, format and control characters (which parsers drop) removed. */
function foldText(s: string): string {
  return s.normalize('NFKC').replace(/[\p{Cf}\p{Cc}]/gu, '');
}

/** The authority of `s` (after `scheme://`, up to the path, query or fragment), or null. */
function authorityOf(s: string): string | null {
  const m = /^[^:/?#]*:[/\\]{2}([^/\\?#]*)/.exec(s);
  return m ? (m[1] ?? '') : null;
}

/**
 * True when the URI's authority holds userinfo (`user@`, `u:p@`, `@`), in the raw spelling or
 * once folded and decoded: no resource URI an agent reads has a use for it, and an upstream that
 * parses the URI drops it, so it only ever disguises another URI.
 */
export function hasUserinfo(uri: string): boolean {
  for (const s of [uri, foldText(decodeEscapes(foldText(uri)))]) {
    if (authorityOf(s)?.includes('@')) return true;
  }
  return false;
}

/** The host of an authority: userinfo, any port (an empty one too) and trailing dots removed. */
function hostOf(authority: string): string {
  const host = authority.slice(authority.lastIndexOf('@') + 1);
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end >= 0 ? host.slice(0, end + 1) : host;
  }
  const colon = host.indexOf(':');
  return (colon >= 0 ? host.slice(0, colon) : host).replace(/\.+$/, '');
}

/**
 * The canonical form under which two spellings may reach one upstream thing: compatibility
 * forms folded, format and control characters removed, escapes decoded (repeatedly), case
 * folded, query and fragment dropped, backslashes as slashes, userinfo and any port dropped from
 * the authority, `;params` dropped from every segment, empty segments and trailing dots dropped,
 * dot segments resolved. `dotted` says a dot segment was present: an upstream may resolve it to
 * anywhere. Used only to refuse look-alikes, never to pick what is read.
 */
export function canonicalResourceUri(uri: string): {
  readonly key: string;
  readonly dotted: boolean;
} {
  let s = foldText(decodeEscapes(foldText(uri)))
    .trim()
    .toLowerCase();
  for (const stop of ['#', '?']) {
    const at = s.indexOf(stop);
    if (at >= 0) s = s.slice(0, at);
  }
  s = s.replaceAll('\\', '/');
  const colon = s.indexOf(':');
  const scheme = colon >= 0 ? s.slice(0, colon) : '';
  const rest = s.slice(colon + 1);
  const parts = rest.split('/');
  // After `//`, the authority: only its host reaches a parser that reads it (`urn:a:b` has none).
  if (rest.startsWith('//')) parts[2] = hostOf(parts[2] ?? '');
  const segments: string[] = [];
  let dotted = false;
  for (const raw of parts) {
    const param = raw.indexOf(';');
    const seg = (param >= 0 ? raw.slice(0, param) : raw).trim();
    if (seg === '.' || seg === '..') {
      dotted = true;
      if (seg === '..') segments.pop();
      continue;
    }
    const bare = seg.replace(/[.\s]+$/u, '');
    if (bare !== '') segments.push(bare);
  }
  return { key: `${scheme}:${segments.join('/')}`, dotted };
}

/**
 * The one governed thing `uri` names among `entries` (every provider's, deduplicated by id), or
 * null. Never returns a template for a URI some static resource has, or whose canonical form is
 * some static resource's, never picks between two different matching templates, and never
 * resolves a URI whose authority holds userinfo. Identical entries of several providers (one
 * static URI, or one URI template, listed by each: the same upstream software registered twice)
 * are copies, each read from its own provider's process: the URI names the copy in `preferred`
 * (what the caller is offered, or the entry it called), the first by catalog id as the lists show
 * it, and nothing when it is offered none of them.
 */
export function resolveGovernedUri(
  uri: string,
  entries: readonly GovernedUriEntry[],
  preferred: ReadonlySet<string> = new Set(),
): GovernedRead | null {
  if (hasUserinfo(uri)) return null;
  const statics = new Set<string>();
  for (const e of entries) if (e.kind === 'resource' && e.key === uri) statics.add(e.id);
  if (statics.size > 0) {
    const only = copyIn(statics, preferred);
    return only === null ? null : { kind: 'resource', id: only };
  }
  const canonical = canonicalResourceUri(uri);
  if (canonical.dotted) return null;
  for (const e of entries) {
    if (e.kind === 'resource' && canonicalResourceUri(e.key).key === canonical.key) return null;
  }
  const matched = new Map<string, Record<string, string>>();
  const templates = new Set<string>();
  for (const e of entries) {
    if (e.kind !== 'resource_template' || !e.listed || matched.has(e.id)) continue;
    const args = matchTemplate(e.key, uri);
    // A URI that does not expand back to itself could read something other than what the
    // arguments say: it matches nothing.
    if (!args || expandTemplate(e.key, args) !== uri) continue;
    matched.set(e.id, args);
    templates.add(e.key);
  }
  // Two different templates: neither governs the URI alone (INVARIANTS 6).
  if (templates.size !== 1) return null;
  const id = copyIn(new Set(matched.keys()), preferred);
  const args = id === null ? undefined : matched.get(id);
  return id === null || args === undefined ? null : { kind: 'resource_template', id, args };
}

/**
 * Of the ids of identical entries, the one that is read: the only one, else the first by catalog
 * id among the preferred, else none.
 */
function copyIn(ids: ReadonlySet<string>, preferred: ReadonlySet<string>): string | null {
  if (ids.size === 1) return [...ids][0] ?? null;
  const offered = [...ids].filter((id) => preferred.has(id)).sort();
  return offered[0] ?? null;
}

/**
 * Every provider's resources and templates as `db` (the store, or a write in progress) holds
 * them, whatever their state.
 */
export async function readGovernedEntries(db: Store['db']): Promise<GovernedUriEntry[]> {
  const rows = await db
    .selectFrom('provider_entries')
    .select(['tool_id', 'kind', 'key', 'state'])
    .where('kind', 'in', ['resource', 'resource_template'])
    .execute();
  return rows.map((r) => ({
    id: r.tool_id,
    kind: r.kind as GovernedUriEntry['kind'],
    key: r.key,
    // A removed static still governs its URI (the upstream may serve it still); a removed
    // template reads nothing (its catalog entry is quarantined) and would only shadow its
    // successor.
    listed: r.state !== 'removed',
  }));
}

/** Every provider's listed resources and templates, read from the store when asked. */
export class GovernedUris {
  readonly #store: Pick<Store, 'db'>;

  constructor(store: Pick<Store, 'db'>) {
    this.#store = store;
  }

  entries(): Promise<GovernedUriEntry[]> {
    return readGovernedEntries(this.#store.db);
  }

  /**
   * What `uri` names, over every provider's entries and `also` (the caller's own entries); of
   * identical entries of several providers, the copy whose id is among `also`.
   */
  async resolve(uri: string, also: readonly GovernedUriEntry[] = []): Promise<GovernedRead | null> {
    const byId = new Map<string, GovernedUriEntry>();
    for (const e of [...(await this.entries()), ...also]) if (!byId.has(e.id)) byId.set(e.id, e);
    return resolveGovernedUri(uri, [...byId.values()], new Set(also.map((e) => e.id)));
  }
}
