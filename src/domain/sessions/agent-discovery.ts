/**
 * @module Discovery for agents (C5, dynamic part; docs/architecture.md §6). An agent searches
 * with its own credential, within its own permitted set: the set of its session (re-checked
 * against live grants and tier, as the gate's grant step does), or — with no session — the set a
 * session opened now would get (grants ∩ the token user's permissions ∩ tier ∩ offerable, toxic
 * combinations withheld). Nothing here reads the global catalog for an answer: the set is
 * decided first, and the search (catalog/scoped-discovery.ts) sees only it.
 */

import { type AgentPrincipal, type Problem, problem, ToolgateError } from '../../core/index.js';
import { readRevisions, type SessionRow, type Store } from '../../records/store/index.js';
import {
  type AgentDiscoveryHit,
  type AgentDiscoveryQuery,
  type CatalogService,
  MAX_AGENT_DISCOVERY_LIMIT,
  type ScopedDiscovery,
  type ScopedTool,
  type ScopedToolFacts,
  scopeKey,
  type ToolVersionDetail,
} from '../catalog/index.js';
import type { AgentService, AgentTier } from '../identity/index.js';
import { exportNames } from './export-names.js';
import { SESSION_COLUMNS_BUT_SET } from './session-row.js';
import { permittedSet, type SessionService, type SessionTool } from './session-service.js';
import { type SessionToolIndex, sessionToolIndex } from './session-tool-index.js';
import { shadowedTemplateReasons } from './template-shadows.js';
import { isOAuthSession, sessionPermissions, tokenCapabilities } from './token-scopes.js';

export interface AgentDiscoveryResult {
  readonly results: readonly AgentDiscoveryHit[];
}

const TIER_RANK: Record<AgentTier, number> = { public: 0, restricted: 1, privileged: 2 };
const MAX_QUERY_CHARS = 500;
const MAX_TAGS = 10;
const MAX_TAG_CHARS = 100;
/** Permitted sets of session-less callers kept (by revision, tier and capabilities). */
const MAX_CACHED_SETS = 256;

export class AgentDiscovery {
  readonly #store: Store;
  readonly #catalog: CatalogService;
  readonly #agents: AgentService;
  readonly #sessions: SessionService;
  readonly #search: ScopedDiscovery;
  #offered: { revision: number; tools: Promise<ToolVersionDetail[]> } | null = null;
  readonly #sets = new Map<string, { key: string; tools: ScopedTool[] }>();
  /** Parsed tool sets by session id, reused while the identity revision is the same. */
  readonly #parsed = new Map<
    string,
    { identity: number; tools: readonly SessionTool[]; key: string }
  >();

  constructor(
    store: Store,
    catalog: CatalogService,
    agents: AgentService,
    sessions: SessionService,
    search: ScopedDiscovery,
  ) {
    this.#store = store;
    this.#catalog = catalog;
    this.#agents = agents;
    this.#sessions = sessions;
    this.#search = search;
  }

  /**
   * Searches the caller's own open session. Another principal's session, a closed or unknown
   * one are all SESSION_NOT_FOUND, as for any session request.
   */
  async inSession(
    sessionId: string,
    who: AgentPrincipal,
    query: unknown,
  ): Promise<AgentDiscoveryResult> {
    const checked = checkQuery(query);
    const identity = (await readRevisions(this.#store.db)).identity;
    const row = await this.#sessions.admit(await this.#row(sessionId), sessionId, who);
    return this.#searchSession(row, identity, checked, tokenCapabilities(who));
  }

  /**
   * The built-in discovery tool's handler: the gate has already admitted the call for this
   * session (its principal, grants, lifecycle), so the session is read by id. Must never be
   * reachable but through the gate's execute step.
   */
  async forGatedCall(
    sessionId: string,
    query: unknown,
    /** The capabilities the call's OAuth token covers (null: no OAuth token narrows it). */
    token: readonly string[] | null,
  ): Promise<AgentDiscoveryResult> {
    const checked = checkQuery(query);
    const identity = (await readRevisions(this.#store.db)).identity;
    const row = await this.#row(sessionId);
    if (!row || row.status !== 'open')
      throw new ToolgateError('SESSION_NOT_FOUND', 'no open session with this id', { sessionId });
    return this.#searchSession(row, identity, checked, token);
  }

  /**
   * The session row without its tool set: a set of thousands of tools is a large text, read
   * again only when the identity revision moved (every change of a stored set moves it).
   */
  async #row(sessionId: string): Promise<SessionRow | undefined> {
    const row = await this.#store.db
      .selectFrom('sessions')
      .select(SESSION_COLUMNS_BUT_SET)
      .where('id', '=', sessionId)
      .executeTakeFirst();
    // The set is read separately (#toolsOf); nothing here uses these two.
    return row ? { ...row, tool_set: '', withheld: '' } : undefined;
  }

  async #toolsOf(
    sessionId: string,
    agentId: string,
    identity: number,
  ): Promise<{ tools: readonly SessionTool[]; key: string }> {
    const cached = this.#parsed.get(sessionId);
    if (cached?.identity === identity) return cached;
    const row = await this.#store.db
      .selectFrom('sessions')
      .select('tool_set')
      .where('id', '=', sessionId)
      .executeTakeFirst();
    // Parsed and keyed once per distinct set of this agent, whichever session holds it.
    const index = sessionToolIndex({ agent_id: agentId, tool_set: row?.tool_set ?? '[]' });
    const parsed = { identity, tools: index.tools, key: keyOf(index) };
    this.#parsed.delete(sessionId);
    this.#parsed.set(sessionId, parsed);
    for (const k of this.#parsed.keys()) {
      if (this.#parsed.size <= MAX_CACHED_SETS) break;
      this.#parsed.delete(k);
    }
    return parsed;
  }

  /**
   * Searches the set a session opened now would be offered, without opening one: the agent's
   * grants narrowed by the user its token vouches for — an OAuth token narrowing, as in a session,
   * the set the grants allow (token-scopes.ts), so the toxic combination is judged on that set.
   */
  async forAgent(caller: AgentPrincipal, query: unknown): Promise<AgentDiscoveryResult> {
    const checked = checkQuery(query);
    const agent = await this.#agents.get(caller.agentId);
    const token = tokenCapabilities(caller);
    const userId = caller.user?.id ?? null;
    const oauth = token !== null && isOAuthSession({ user_id: userId });
    const caps = await this.#sessions.capabilities(
      caller.agentId,
      userId,
      oauth
        ? this.#sessions.oauthCeiling(agent.capabilities)
        : caller.user
          ? [...caller.user.permissions]
          : null,
      agent,
    );
    const revision = await this.#catalog.revision();
    const setKey = `${revision}|${agent.tier}|${[...caps].sort().join(',')}`;
    let set = this.#sets.get(setKey);
    if (!set) {
      const { tools } = permittedSet(await this.#offeredAt(revision), caps, agent.tier);
      const named = exportNames(tools, await shadowedTemplateReasons(this.#store.db)).tools;
      set = { key: scopeKey(named), tools: named };
      this.#sets.set(setKey, set);
      for (const k of this.#sets.keys()) {
        if (this.#sets.size <= MAX_CACHED_SETS) break;
        this.#sets.delete(k);
      }
    }
    if (!oauth || token === null) return { results: await this.#search.search(set, checked) };
    const narrowed = {
      key: `${set.key}|${[...token].sort().join(',')}`,
      tools: set.tools,
      admits: (t: ScopedToolFacts) => t.required_capabilities.every((c) => token.includes(c)),
    };
    return { results: await this.#search.search(narrowed, checked) };
  }

  async #searchSession(
    row: SessionRow,
    identity: number,
    query: AgentDiscoveryQuery,
    token: readonly string[] | null,
  ): Promise<AgentDiscoveryResult> {
    const agent = await this.#agents.get(row.agent_id);
    // An OAuth session's user: the request's token narrows it, never the opening one's.
    const caps = await this.#sessions.capabilities(
      row.agent_id,
      row.user_id,
      sessionPermissions(row, token, this.#sessions.oauthCeiling(agent.capabilities)),
      agent,
    );
    const parsed = await this.#toolsOf(row.id, row.agent_id, identity);
    const tier = agent.tier;
    // A grant revoked, or a tier lowered, since the session opened stops the next call (the
    // gate's grant step): such a tool is not found either.
    const admits = (t: ScopedToolFacts) =>
      TIER_RANK[t.access_tier] <= TIER_RANK[tier] &&
      t.required_capabilities.every((c) => caps.has(c));
    const key = `${parsed.key}|${tier}|${[...caps].sort().join(',')}`;
    return {
      results: await this.#search.search({ key, tools: parsed.tools, admits }, query),
    };
  }

  /** The catalog's offerable tools, read once per catalog revision. */
  #offeredAt(revision: number): Promise<ToolVersionDetail[]> {
    if (this.#offered?.revision !== revision) {
      const tools = this.#catalog.offered();
      this.#offered = { revision, tools };
      // A failed read is not kept.
      tools.catch(() => {
        if (this.#offered?.tools === tools) this.#offered = null;
      });
    }
    return this.#offered.tools;
  }
}

/** Each shared set index's discovery key, hashed once (docs/architecture.md §6). */
const scopeKeys = new WeakMap<SessionToolIndex, string>();

function keyOf(index: SessionToolIndex): string {
  let key = scopeKeys.get(index);
  if (key === undefined) {
    key = scopeKey(index.tools);
    scopeKeys.set(index, key);
  }
  return key;
}

/** Parses a query from any front: bad input is INPUT_INVALID with every problem, and runs nothing. */
export function checkQuery(input: unknown): AgentDiscoveryQuery {
  const problems: Problem[] = [];
  const raw = input ?? {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ToolgateError('INPUT_INVALID', 'the query must be an object', {
      problems: [problem('', 'must be an object', 'type')],
    });
  }
  const { q, query, tags, limit, ...rest } = raw as Record<string, unknown>;
  for (const name of Object.keys(rest))
    problems.push(problem(`/${name}`, 'is not a query field', 'additionalProperties'));
  if (q !== undefined && query !== undefined)
    problems.push(problem('/query', 'give q or query, not both', 'oneOf'));
  const text = q ?? query;
  if (text !== undefined && (typeof text !== 'string' || text.length > MAX_QUERY_CHARS))
    problems.push(
      problem(
        q !== undefined ? '/q' : '/query',
        `must be a string of at most ${MAX_QUERY_CHARS} characters`,
        'maxLength',
      ),
    );
  if (
    tags !== undefined &&
    (!Array.isArray(tags) ||
      tags.length > MAX_TAGS ||
      tags.some((t) => typeof t !== 'string' || t.length > MAX_TAG_CHARS))
  )
    problems.push(
      problem(
        '/tags',
        `must be at most ${MAX_TAGS} strings of at most ${MAX_TAG_CHARS} characters`,
        'items',
      ),
    );
  if (
    limit !== undefined &&
    (typeof limit !== 'number' ||
      !Number.isInteger(limit) ||
      limit < 1 ||
      limit > MAX_AGENT_DISCOVERY_LIMIT)
  )
    problems.push(
      problem('/limit', `must be an integer from 1 to ${MAX_AGENT_DISCOVERY_LIMIT}`, 'range'),
    );
  if (problems.length > 0)
    throw new ToolgateError('INPUT_INVALID', 'the discovery query is invalid', { problems });
  return {
    ...(typeof text === 'string' ? { q: text } : {}),
    ...(Array.isArray(tags) ? { tags: tags as string[] } : {}),
    ...(typeof limit === 'number' ? { limit } : {}),
  };
}
