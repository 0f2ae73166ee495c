/**
 * @module Which one governed thing a resource URI names (docs/security-model.md "Resources and
 * templates: one URI, one governed thing"): resolved over every resource and resource template
 * any provider lists (whatever its state, whoever is offered it), never over the caller's offered
 * set alone, so a broad template can never read what a static resource or another provider's
 * template governs. A URI that names a static resource is that resource; otherwise it is the one
 * template that matches it; anything else (two statics, two templates, a spelling that may alias a
 * static, a dot segment) names nothing. The caller checks the answer against what it is offered.
 */
import { expandTemplate, type McpEntry, matchTemplate } from '../catalog/index.js';
import type { Store } from '../store/index.js';

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

function decodeEscapes(s: string): string {
  let out = s;
  for (let i = 0; i < MAX_DECODE_ROUNDS && /%[0-9a-f]{2}/i.test(out); i += 1) {
    out = out.replace(/%([0-9a-f]{2})/gi, (_, hex: string) =>
      String.fromCharCode(Number.parseInt(hex, 16)),
    );
  }
  return out;
}

/**
 * The form under which two spellings may reach one upstream thing: case folded, escapes decoded
 * (repeatedly), query and fragment dropped, backslashes as slashes, empty and dot segments
 * resolved. `dotted` says a dot segment was present: an upstream may resolve it to anywhere.
 * Used only to refuse look-alikes, never to pick what is read.
 */
export function uriAliasKey(uri: string): { readonly key: string; readonly dotted: boolean } {
  let s = decodeEscapes(uri.toLowerCase()).toLowerCase();
  for (const stop of ['#', '?']) {
    const at = s.indexOf(stop);
    if (at >= 0) s = s.slice(0, at);
  }
  s = s.replaceAll('\\', '/');
  const colon = s.indexOf(':');
  const scheme = colon >= 0 ? s.slice(0, colon) : '';
  const segments: string[] = [];
  let dotted = false;
  for (const seg of s.slice(colon + 1).split('/')) {
    if (seg === '') continue;
    if (seg === '.' || seg === '..') {
      dotted = true;
      if (seg === '..') segments.pop();
      continue;
    }
    segments.push(seg);
  }
  return { key: `${scheme}:${segments.join('/')}`, dotted };
}

/**
 * The one governed thing `uri` names among `entries` (every provider's, deduplicated by id), or
 * null. Never returns a template for a URI some static resource has, or may have under another
 * spelling, and never picks between two matching templates.
 */
export function resolveGovernedUri(
  uri: string,
  entries: readonly GovernedUriEntry[],
): GovernedRead | null {
  const statics = new Set<string>();
  for (const e of entries) if (e.kind === 'resource' && e.key === uri) statics.add(e.id);
  if (statics.size > 0) {
    const [only] = statics;
    return statics.size === 1 && only !== undefined ? { kind: 'resource', id: only } : null;
  }
  const alias = uriAliasKey(uri);
  if (alias.dotted) return null;
  for (const e of entries) {
    if (e.kind === 'resource' && uriAliasKey(e.key).key === alias.key) return null;
  }
  let found: GovernedRead | null = null;
  const matched = new Set<string>();
  for (const e of entries) {
    if (e.kind !== 'resource_template' || !e.listed || matched.has(e.id)) continue;
    const args = matchTemplate(e.key, uri);
    // A URI that does not expand back to itself could read something other than what the
    // arguments say: it matches nothing.
    if (!args || expandTemplate(e.key, args) !== uri) continue;
    matched.add(e.id);
    found = { kind: 'resource_template', id: e.id, args };
  }
  return matched.size === 1 ? found : null;
}

/** Every provider's listed resources and templates, read from the store when asked. */
export class GovernedUris {
  readonly #store: Pick<Store, 'db'>;

  constructor(store: Pick<Store, 'db'>) {
    this.#store = store;
  }

  async entries(): Promise<GovernedUriEntry[]> {
    const rows = await this.#store.db
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

  /** What `uri` names, over every provider's entries and `also` (the caller's own entries). */
  async resolve(uri: string, also: readonly GovernedUriEntry[] = []): Promise<GovernedRead | null> {
    const byId = new Map<string, GovernedUriEntry>();
    for (const e of [...(await this.entries()), ...also]) if (!byId.has(e.id)) byId.set(e.id, e);
    return resolveGovernedUri(uri, [...byId.values()]);
  }
}
