/**
 * @module What a session offers of upstream resources, resource templates and prompts (C5, C15;
 * docs/architecture.md §6): exactly the governed entries in its permitted set (classified,
 * reviewed, not quarantined, granted, within tier), listed in a deterministic order. Nothing
 * outside the set is named. A `resources/read` or `prompts/get` is resolved by the gate's
 * `resolve` step with the same rules (`offerable`, `entryKindOf`, `promptNames`), never here.
 */
import type { AgentPrincipal } from '../../core/index.js';
import type { CatalogService, ToolVersionDetail } from '../catalog/index.js';
import { type OfferedEntry, promptNames } from './prompt-names.js';
import type { SessionService } from './session-service.js';
import { sessionToolIndex } from './session-tool-index.js';
import { tokenCapabilities, tokenCovers } from './token-scopes.js';

export { type OfferedEntry, promptNames, promptNaming } from './prompt-names.js';

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

function byKey<T>(key: (t: T) => string): (a: T, b: T) => number {
  return (a, b) => {
    const x = key(a);
    const y = key(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };
}

type Offered = OfferedEntry & { readonly description: string };

/** Offered only while not quarantined, and active or deprecated. */
export function offerable(detail: ToolVersionDetail): boolean {
  return (
    !detail.quarantined && (detail.lifecycle === 'active' || detail.lifecycle === 'deprecated')
  );
}

export { entryKindOf } from './session-tool-index.js';

export class SessionEntries {
  readonly #sessions: Pick<SessionService, 'require'>;
  readonly #catalog: Pick<CatalogService, 'get'>;

  constructor(sessions: Pick<SessionService, 'require'>, catalog: Pick<CatalogService, 'get'>) {
    this.#sessions = sessions;
    this.#catalog = catalog;
  }

  /** The session's offered entries, by catalog id (the order every later step keeps). */
  async #offered(sessionId: string, who: string | AgentPrincipal): Promise<Offered[]> {
    const session = await this.#sessions.require(sessionId, who);
    // Only what this request's OAuth token covers, of what the session holds (token-scopes.ts).
    const token = tokenCapabilities(who);
    const out: Offered[] = [];
    // Only the set's entries are read (indexed once per set), never its tools.
    for (const t of sessionToolIndex(session).entries) {
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
   * are both listed, the later under its catalog id (dots as `__`); a prompt named with `__`, or
   * two that would still share a name, are not listed (`promptNames`).
   */
  async list(sessionId: string, who: string | AgentPrincipal): Promise<OfferedEntries> {
    return present(await this.#offered(sessionId, who));
  }
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
      case 'prompt': {
        const name = names.get(o.id);
        if (name === undefined) break;
        prompts.push({
          name,
          ...title,
          description: o.description,
          arguments: e.arguments.map((a) => ({ ...a })),
        });
        break;
      }
    }
  }
  return {
    resources: resources.sort(byKey((r) => r.uri)),
    resourceTemplates: templates.sort(byKey((t) => t.uriTemplate)),
    prompts: prompts.sort(byKey((p) => p.name)),
  };
}
