/**
 * @module What a session offers of upstream resources, resource templates and prompts (C5, C15;
 * docs/architecture.md §6): exactly the governed entries in its permitted set (classified,
 * reviewed, not quarantined, granted, within tier), listed in a deterministic order, and the
 * gate call a `resources/read` or `prompts/get` becomes. Nothing outside the set is named, and a
 * miss never says whether the upstream has such an entry.
 */
import type { AgentPrincipal } from '../../core/index.js';
import type { CatalogService, McpEntry, ToolVersionDetail } from '../catalog/index.js';
import { type GovernedUris, governedEntryOf } from './governed-uris.js';
import type { SessionService, SessionTool } from './session-service.js';
import { tokenCapabilities, tokenCovers } from './token-scopes.js';

export interface OfferedResource {
  readonly uri: string;
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly mimeType?: string;
}

export interface OfferedResourceTemplate {
  readonly uriTemplate: string;
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly mimeType?: string;
}

export interface OfferedPrompt {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly arguments: readonly { name: string; description?: string; required?: boolean }[];
}

export interface OfferedEntries {
  readonly resources: readonly OfferedResource[];
  readonly resourceTemplates: readonly OfferedResourceTemplate[];
  readonly prompts: readonly OfferedPrompt[];
}

/** The gate call an entry request becomes: the entry's catalog id and its checked arguments. */
export interface EntryCall {
  readonly toolId: string;
  readonly args: Record<string, string>;
}

interface Offered {
  readonly id: string;
  readonly entry: McpEntry;
  readonly description: string;
}

function byKey<T>(key: (t: T) => string): (a: T, b: T) => number {
  return (a, b) => {
    const x = key(a);
    const y = key(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };
}

function offerable(detail: ToolVersionDetail): boolean {
  return (
    !detail.quarantined && (detail.lifecycle === 'active' || detail.lifecycle === 'deprecated')
  );
}

export class SessionEntries {
  readonly #sessions: Pick<SessionService, 'require'>;
  readonly #catalog: Pick<CatalogService, 'get'>;
  readonly #governed: Pick<GovernedUris, 'resolve'>;

  constructor(
    sessions: Pick<SessionService, 'require'>,
    catalog: Pick<CatalogService, 'get'>,
    governed: Pick<GovernedUris, 'resolve'>,
  ) {
    this.#sessions = sessions;
    this.#catalog = catalog;
    this.#governed = governed;
  }

  /** The session's offered entries, by catalog id (the order every later step keeps). */
  async #offered(sessionId: string, who: string | AgentPrincipal): Promise<Offered[]> {
    const session = await this.#sessions.require(sessionId, who);
    // Only what this request's OAuth token covers, of what the session holds (token-scopes.ts).
    const token = tokenCapabilities(who);
    const out: Offered[] = [];
    for (const t of JSON.parse(session.tool_set) as SessionTool[]) {
      // Only catalog entries made from upstream entries have a third id part of these names.
      const kind = t.id.split('.')[1];
      if (kind !== 'resource' && kind !== 'template' && kind !== 'prompt') continue;
      const detail = await this.#catalog.get(t.id, t.version);
      const runtime = detail.definition.runtime;
      if (runtime.kind !== 'mcp' || runtime.entry === undefined || !offerable(detail)) continue;
      if (!tokenCovers(token, detail)) continue;
      out.push({ id: t.id, entry: runtime.entry, description: detail.description });
    }
    return out.sort(byKey((o) => o.id));
  }

  /**
   * The lists a client is shown, each sorted by its key (URI, URI template, name). Two entries
   * with one URI (two providers) list once, the first by catalog id; two prompts with one name
   * are both listed, the later under its catalog id (dots as `__`), as clashing tool names are.
   */
  async list(sessionId: string, who: string | AgentPrincipal): Promise<OfferedEntries> {
    return present(await this.#offered(sessionId, who));
  }

  /**
   * The gate call reading `uri`: the one governed thing the URI names over every provider's
   * resources and templates (governed-uris.ts), when it is offered to this session. Null when the
   * URI names nothing, more than one thing, or something this session is not offered: a static
   * resource is never read through a template, whoever is offered which.
   */
  async resolveResource(
    sessionId: string,
    who: string | AgentPrincipal,
    uri: string,
  ): Promise<EntryCall | null> {
    const offered = await this.#offered(sessionId, who);
    const own = offered.flatMap((o) => governedEntryOf(o.id, o.entry) ?? []);
    const named = await this.#governed.resolve(uri, own);
    if (named === null || !offered.some((o) => o.id === named.id)) return null;
    return { toolId: named.id, args: named.kind === 'resource' ? {} : named.args };
  }

  /** The gate call getting the prompt listed under `name`, or null when none is offered. */
  async resolvePrompt(
    sessionId: string,
    who: string | AgentPrincipal,
    name: string,
  ): Promise<string | null> {
    const offered = await this.#offered(sessionId, who);
    const names = promptNames(offered);
    for (const [id, shown] of names) if (shown === name) return id;
    return null;
  }
}

/** The name each offered prompt is listed under, by catalog id. */
function promptNames(offered: readonly Offered[]): Map<string, string> {
  const taken = new Set<string>();
  const out = new Map<string, string>();
  for (const o of offered) {
    if (o.entry.kind !== 'prompt') continue;
    const name = taken.has(o.entry.name) ? o.id.replaceAll('.', '__') : o.entry.name;
    taken.add(name);
    out.set(o.id, name);
  }
  return out;
}

function present(offered: readonly Offered[]): OfferedEntries {
  const resources: OfferedResource[] = [];
  const templates: OfferedResourceTemplate[] = [];
  const prompts: OfferedPrompt[] = [];
  const uris = new Set<string>();
  const names = promptNames(offered);
  for (const o of offered) {
    const e = o.entry;
    const title = 'title' in e && e.title !== undefined ? { title: e.title } : {};
    switch (e.kind) {
      case 'resource':
        if (uris.has(e.uri)) break;
        uris.add(e.uri);
        resources.push({
          uri: e.uri,
          name: e.name,
          ...title,
          description: o.description,
          ...(e.mime_type !== undefined ? { mimeType: e.mime_type } : {}),
        });
        break;
      case 'resource_template':
        if (uris.has(e.uri_template)) break;
        uris.add(e.uri_template);
        templates.push({
          uriTemplate: e.uri_template,
          name: e.name,
          ...title,
          description: o.description,
          ...(e.mime_type !== undefined ? { mimeType: e.mime_type } : {}),
        });
        break;
      case 'prompt':
        prompts.push({
          name: names.get(o.id) ?? e.name,
          ...title,
          description: o.description,
          arguments: e.arguments.map((a) => ({ ...a })),
        });
        break;
    }
  }
  return {
    resources: resources.sort(byKey((r) => r.uri)),
    resourceTemplates: templates.sort(byKey((t) => t.uriTemplate)),
    prompts: prompts.sort(byKey((p) => p.name)),
  };
}
