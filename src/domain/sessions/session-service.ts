/**
 * @module Sessions and the permitted set (C5, static part). A session's tool set is
 * agent grants ∩ the user's permissions ∩ tier ∩ offerable lifecycle ∩ not quarantined, and never
 * holds a private-data read beside an unconstrained egress tool: the egress side is withheld,
 * with a reason only admins see. An OAuth user's permissions are no part of the stored set: each
 * request's token narrows what it lists and calls (token-scopes.ts).
 */
import { randomBytes } from 'node:crypto';
import semver from 'semver';
import {
  type Actor,
  type AgentPrincipal,
  type Clock,
  decodeCursor,
  encodeCursor,
  type Page,
  type PageRequest,
  pageLimit,
  problem,
  systemActor,
  systemClock,
  ToolgateError,
} from '../../core/index.js';
import {
  appendEvent,
  bumpIdentityRevision,
  olderThan,
  type SessionRow,
  type Store,
} from '../../records/store/index.js';
import type { CatalogService, HealthReader, ToolVersionDetail } from '../catalog/index.js';
import {
  type AgentService,
  type AgentTier,
  type AgentView,
  isLocalUserId,
  isUserId,
  type UserService,
} from '../identity/index.js';
import {
  type AgentCaps,
  DEFAULT_AGENT_CAPS,
  FAIR_EVICTION,
  insertSessionWithinCap,
  touchSession,
} from './agent-caps.js';
import { exportNames } from './export-names.js';
import {
  anyLiteralSighting,
  type FlaggedResult,
  flaggedResults,
  injectionSources,
  type LiteralScopes,
  type LiteralSighting,
  recordInjectionMark,
  recordInjectionText,
  recordRunLiterals,
  runLiteralLookUp,
  type SeenLiteral,
} from './run-literals.js';
import { asPrincipal, auditPrincipalMismatch, principalMatches } from './session-principal.js';
import { rowKeepingSet, untrustedSourcesOf } from './session-row.js';
import type { SessionTool, WithheldTool } from './session-tool.js';
import { sessionToolIndex } from './session-tool-index.js';
import { shadowedTemplateReasons } from './template-shadows.js';
import {
  isOAuthSession,
  narrowTools,
  OAUTH_SESSION_PERMISSIONS,
  sessionPermissions,
  tokenCapabilities,
  tokenCovers,
} from './token-scopes.js';
import {
  exportTool,
  isOfferableState,
  type OfferedMajor,
  offeredMajor,
  type ToolFormat,
  VERSIONS_META_KEY,
} from './tool-export.js';
import { addUntrustedSource } from './untrusted-sources.js';
import { OPERATOR_CLOSE, withdrawRunApprovals } from './withdraw-approvals.js';

export type { SessionPin, SessionTool, WithheldTool } from './session-tool.js';

export interface SessionView {
  readonly id: string;
  readonly agent_id: string;
  readonly user_id: string | null;
  readonly run_id: string;
  readonly created_at: string;
  readonly expires_at: string;
  readonly tools: readonly SessionTool[];
}

/** A live session as an operator's list shows it. */
export interface LiveSession extends SessionView {
  readonly suspended: boolean;
  readonly private_data_read: boolean;
  readonly external_sends: number;
  readonly egress_bytes: number;
}

export interface OpenSessionOptions {
  readonly onBehalfOf?: string;
  readonly runId?: string;
  /** Seconds; default 8 hours, at most 7 days. */
  readonly ttlSeconds?: number;
}

const TIER_RANK: Record<AgentTier, number> = { public: 0, restricted: 1, privileged: 2 };
const DEFAULT_TTL_S = 8 * 3600;
const MAX_TTL_S = 7 * 86_400;
export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/**
 * Pure: which tools a principal may be offered, and which are withheld for the toxic
 * combination. Tools outside grants, permissions or tier are simply absent.
 */
export function permittedSet(
  offered: readonly ToolVersionDetail[],
  capabilities: ReadonlySet<string>,
  tier: AgentTier,
  /** The run already read private data in another session: egress stays withheld. */
  runReadPrivate = false,
): { tools: ToolVersionDetail[]; withheld: WithheldTool[] } {
  const allowed = offered.filter(
    (t) =>
      TIER_RANK[t.access_tier as AgentTier] <= TIER_RANK[tier] &&
      t.definition.required_capabilities.every((c) => capabilities.has(c)),
  );
  const privateReads = allowed.filter((t) => t.data_access === 'private');
  if (privateReads.length === 0 && !runReadPrivate) return { tools: allowed, withheld: [] };
  const reason =
    privateReads.length > 0
      ? `toxic combination: the session holds private-data tools (${privateReads
          .map((t) => t.id)
          .slice(0, 5)
          .join(', ')}); unconstrained egress is withheld`
      : 'toxic combination: this run has already read private data; unconstrained egress is withheld';
  return {
    tools: allowed.filter((t) => t.egress !== 'unconstrained'),
    withheld: allowed
      .filter((t) => t.egress === 'unconstrained')
      .map((t) => ({ id: t.id, version: t.version, reason })),
  };
}

/** Who ended a session its agent did not close, the record's action, the agent, and why. */
type EndRecord = readonly [Actor, 'session.evicted' | 'session.closed', string, string];

export class SessionService {
  readonly #store: Store;
  readonly #catalog: CatalogService;
  readonly #health: HealthReader | null;
  readonly #oauthReach: readonly string[] | null;
  readonly #agents: AgentService;
  readonly #users: UserService;
  readonly #clock: Clock;
  readonly #caps: Pick<AgentCaps, 'maxSessionsPerAgent' | 'userSessionShare'>;

  constructor(
    store: Store,
    catalog: CatalogService,
    agents: AgentService,
    users: UserService,
    clock: Clock = systemClock,
    /** Open sessions one agent, and one token user of it, may hold; past it `open` is LIMIT_REACHED. */
    caps: Pick<AgentCaps, 'maxSessionsPerAgent' | 'userSessionShare'> = DEFAULT_AGENT_CAPS,
    /**
     * The health monitor (C14): a tool it marks unavailable is left out of every permitted set
     * computed from now on (open, refresh) and of exported lists, until it comes back.
     */
    health: HealthReader | null = null,
    /** Every capability a configured OAuth scope maps to (token-scopes.ts); null: no OAuth. */
    oauthReach: readonly string[] | null = null,
  ) {
    this.#store = store;
    this.#catalog = catalog;
    this.#agents = agents;
    this.#users = users;
    this.#clock = clock;
    this.#caps = caps;
    this.#health = health;
    this.#oauthReach = oauthReach;
  }

  /**
   * What an OAuth session's stored set is narrowed to: the most any token of this gateway can
   * hold, whichever one opened it (a tool no scope reaches stays unregistered); without OAuth
   * configured, `grants` unchanged.
   */
  oauthCeiling(grants: readonly string[]): readonly string[] {
    return this.#oauthReach ?? grants;
  }

  /** What may be offered now, less what the health monitor withdrew. */
  async #offered(): Promise<ToolVersionDetail[]> {
    const offered = await this.#catalog.offeredMajors();
    const health = this.#health;
    return health
      ? offered.filter((t) => health.healthOf(t.id, t.version).state !== 'unavailable')
      : offered;
  }

  /** The capabilities a session may exercise: agent grants, narrowed by the user's permissions. */
  async capabilities(
    agentId: string,
    userId: string | null,
    tokenPermissions: readonly string[] | null = null,
    loaded?: AgentView,
    loadUser: (id: string) => Promise<{ permissions: readonly string[] }> = (id) =>
      this.#users.get(id),
    isDisabled: (id: string) => Promise<boolean> = (id) => this.#users.disabled(id),
  ): Promise<Set<string>> {
    const agent = loaded ?? (await this.#agents.get(agentId));
    if (!agent.enabled)
      throw new ToolgateError('AGENT_NOT_FOUND', `no agent ${agentId}`, { agentId });
    const caps = new Set(agent.capabilities);
    if (userId !== null) {
      // A token vouches for its user's permissions, but never for a user an admin disabled.
      if (tokenPermissions !== null && (await isDisabled(userId))) {
        throw new ToolgateError('USER_NOT_FOUND', `no enabled user ${userId}`, { userId });
      }
      // The token's statement of the user's permissions, else the configured user's.
      const permissions = tokenPermissions ?? (await loadUser(userId)).permissions;
      const allowed = new Set(permissions);
      for (const c of caps) if (!allowed.has(c)) caps.delete(c);
    }
    return caps;
  }

  /**
   * Opens a session bound to the whole principal: its agent, its credential (every later request
   * must present it) and the user its token vouches for, with their permissions (instead of the
   * users table). A bare agent id is an in-process caller with neither.
   */
  async open(who: string | AgentPrincipal, options: OpenSessionOptions = {}): Promise<SessionView> {
    const principal = asPrincipal(who);
    const { agentId } = principal;
    const tokenUser = principal.user;
    const ttl = options.ttlSeconds ?? DEFAULT_TTL_S;
    if (!Number.isInteger(ttl) || ttl < 1 || ttl > MAX_TTL_S) {
      throw new ToolgateError('INPUT_INVALID', `ttl must be 1–${MAX_TTL_S} seconds`, {
        problems: [problem('/ttl_seconds', `must be an integer from 1 to ${MAX_TTL_S}`, 'range')],
      });
    }
    if (options.runId !== undefined && !RUN_ID_PATTERN.test(options.runId)) {
      throw new ToolgateError('INPUT_INVALID', 'run_id has an invalid format', {
        problems: [problem('/run_id', 'must be 1–128 letters, digits, _ . : -', 'pattern')],
      });
    }
    // `on_behalf_of` names a local user only: an OAuth user is (issuer, subject) and only that
    // issuer's token can name them, so no agent can act for one by writing its id (user-id.ts).
    if (options.onBehalfOf !== undefined && !isLocalUserId(options.onBehalfOf)) {
      throw new ToolgateError('INPUT_INVALID', 'on_behalf_of is not a user id', {
        problems: [problem('/on_behalf_of', 'must be a local user id', 'pattern')],
      });
    }
    if (tokenUser && !isUserId(tokenUser.id)) {
      throw new ToolgateError('INPUT_INVALID', 'the token names no valid user', {
        problems: [problem('/user', 'must be a local or an OAuth user id', 'pattern')],
      });
    }
    if (tokenUser && options.onBehalfOf !== undefined && options.onBehalfOf !== tokenUser.id) {
      // The token says whom the agent acts for; a request cannot name someone else.
      throw new ToolgateError('FORBIDDEN', 'on_behalf_of differs from the user in the token', {});
    }
    const userId = tokenUser?.id ?? options.onBehalfOf ?? null;
    const tokenPermissions = tokenUser ? [...tokenUser.permissions] : null;
    const agent = await this.#agents.get(agentId);
    // An OAuth token narrows each request, never the session: the set is what the grants allow
    // any token of this gateway (token-scopes.ts).
    const oauth = tokenPermissions !== null && isOAuthSession({ user_id: userId });
    const caps = await this.capabilities(
      agentId,
      userId,
      oauth ? this.oauthCeiling(agent.capabilities) : tokenPermissions,
      agent,
    );
    const runId = options.runId ?? null;
    const runReadPrivate = runId !== null && (await this.runHasReadPrivate(agentId, runId));
    const { tools, withheld } = permittedSet(
      await this.#offered(),
      caps,
      agent.tier,
      runReadPrivate,
    );
    const named = exportNames(tools, await shadowedTemplateReasons(this.#store.db));
    const now = this.#clock();
    const id = `ses_${randomBytes(16).toString('base64url')}`;
    const row: SessionRow = {
      id,
      agent_id: agentId,
      user_id: userId,
      run_id: options.runId ?? id,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + ttl * 1000).toISOString(),
      status: 'open',
      tool_set: JSON.stringify(named.tools),
      withheld: JSON.stringify([...withheld, ...named.withheld]),
      private_data_read: 0,
      external_sends: 0,
      egress_bytes: 0,
      spend_cents: 0,
      user_permissions: oauth
        ? OAUTH_SESSION_PERMISSIONS
        : tokenPermissions && JSON.stringify(tokenPermissions),
      suspended: 0,
      credential: principal.credential ?? null,
      untrusted_sources: null,
      injection_seen: 0,
      last_used_at: null,
    };
    const cap = this.#caps;
    const evicted = await insertSessionWithinCap(this.#store.db, row, cap, now, !!tokenUser);
    // Ended for this newcomer as a revocation is: gates drop it, and the record says why.
    const capacity = systemActor('capacity');
    if (evicted) await this.#ended(evicted, [capacity, 'session.evicted', agentId, FAIR_EVICTION]);
    return this.#narrowed(toView(row), principal);
  }

  /**
   * Recomputes an open session's permitted set from the grants, permissions, tier and catalog as
   * they are now (MCP sessions follow changes and tell their client). The set only ever follows
   * the same rules as at open: nothing outside grants ∩ permissions ∩ tier, and no unconstrained
   * egress beside private reads or after a private read in the run. Returns whether it changed.
   */
  async refresh(sessionId: string, who: string | AgentPrincipal): Promise<{ changed: boolean }> {
    const session = await this.require(sessionId, who);
    const agentId = session.agent_id;
    const agent = await this.#agents.get(agentId);
    // The stored set never holds a request's token narrowing (an OAuth session's is the grants').
    const caps = await this.capabilities(
      agentId,
      session.user_id,
      sessionPermissions(session, null, this.oauthCeiling(agent.capabilities)),
      agent,
    );
    const runReadPrivate =
      session.private_data_read === 1 || (await this.runHasReadPrivate(agentId, session.run_id));
    const { tools, withheld } = permittedSet(
      await this.#offered(),
      caps,
      agent.tier,
      runReadPrivate,
    );
    const named = exportNames(tools, await shadowedTemplateReasons(this.#store.db));
    const toolSet = JSON.stringify(named.tools);
    const withheldJson = JSON.stringify([...withheld, ...named.withheld]);
    if (toolSet === session.tool_set && withheldJson === session.withheld)
      return { changed: false };
    await this.#store.db
      .updateTable('sessions')
      .set({ tool_set: toolSet, withheld: withheldJson })
      .where('id', '=', sessionId)
      .where('status', '=', 'open')
      .execute();
    // Gates cache session rows: the new set must be the one they resolve against.
    await bumpIdentityRevision(this.#store.db);
    return { changed: toolSet !== session.tool_set };
  }

  /** Ends a session of this principal; later calls in it are SESSION_NOT_FOUND. */
  async close(sessionId: string, who: string | AgentPrincipal): Promise<void> {
    const { agentId } = asPrincipal(who);
    await this.require(sessionId, who);
    const result = await this.#store.db
      .updateTable('sessions')
      .set({ status: 'closed' })
      .where('id', '=', sessionId)
      .where('agent_id', '=', agentId)
      .where('status', '=', 'open')
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) {
      throw new ToolgateError('SESSION_NOT_FOUND', 'no open session with this id', { sessionId });
    }
    await this.#ended(sessionId);
  }

  /** After a close: gates drop it (they cache open sessions); `record`. Approvals stay (C8). */
  async #ended(sessionId: string, record?: EndRecord): Promise<void> {
    await bumpIdentityRevision(this.#store.db);
    for (const listener of this.#closeListeners) listener(sessionId);
    if (record === undefined) return;
    const [actor, action, agentId, reason] = record;
    await appendEvent(this.#store.db, actor, this.#clock(), {
      action,
      subject: `session:${sessionId}`,
      details: { agent_id: agentId, reason },
    });
  }

  /**
   * Closes a session the gateway took back to make room for others, and records it
   * as an audited `session.evicted` event: the agent did not ask for it, so an admin must see it.
   */
  async evict(sessionId: string, who: string | AgentPrincipal, reason: string): Promise<void> {
    // Closed as the principal that opened it: the session is bound to all of it.
    const { agentId } = asPrincipal(who);
    await this.close(sessionId, who);
    await appendEvent(this.#store.db, systemActor('capacity'), this.#clock(), {
      action: 'session.evicted',
      subject: `session:${sessionId}`,
      details: { agent_id: agentId, reason },
    });
  }

  readonly #closeListeners: ((sessionId: string) => void)[] = [];

  /** Called after a session closed here (upstream MCP processes of the session end with it). */
  onClose(listener: (sessionId: string) => void): void {
    this.#closeListeners.push(listener);
  }

  /** Marks a session suspended (a detector's response); its later calls are refused. */
  async suspend(sessionId: string): Promise<boolean> {
    const result = await this.#store.db
      .updateTable('sessions')
      .set({ suspended: 1 })
      .where('id', '=', sessionId)
      .executeTakeFirst();
    // Gates cache open sessions; a suspended one must stop at once here and soon everywhere.
    await bumpIdentityRevision(this.#store.db);
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Open, unexpired sessions, newest first by `(created_at, id)`: what an operator may suspend or
   * close, optionally of one agent. Each with whether it is suspended and what it has used so far.
   */
  async live(page: PageRequest & { readonly agentId?: string } = {}): Promise<Page<LiveSession>> {
    const limit = pageLimit(page.limit);
    let query = this.#store.db
      .selectFrom('sessions')
      .selectAll()
      .where('status', '=', 'open')
      .where('expires_at', '>', this.#clock().toISOString());
    if (page.agentId !== undefined) query = query.where('agent_id', '=', page.agentId);
    if (page.cursor !== undefined) {
      const [createdAt, id] = decodeCursor('live-sessions', page.cursor);
      query = query.where(olderThan(String(createdAt), String(id)));
    }
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    const items = rows.slice(0, limit).map((row) => ({
      ...toView(row),
      suspended: row.suspended === 1,
      private_data_read: row.private_data_read === 1,
      external_sends: Number(row.external_sends),
      egress_bytes: Number(row.egress_bytes),
    }));
    const last = items.at(-1);
    return {
      items,
      next_cursor:
        rows.length > limit && last
          ? encodeCursor('live-sessions', [last.created_at, last.id])
          : null,
    };
  }

  /**
   * An operator suspends a session: its later calls are refused; recorded with who did it.
   * Suspending a suspended session changes nothing and records nothing (false).
   */
  async suspendBy(sessionId: string, actor: Actor, reason: string): Promise<boolean> {
    const row = await this.#liveRow(sessionId);
    if (row.suspended === 1) return false;
    await this.suspend(sessionId);
    await appendEvent(this.#store.db, actor, this.#clock(), {
      action: 'session.suspended',
      subject: `session:${sessionId}`,
      details: { agent_id: row.agent_id, reason },
    });
    return true;
  }

  /** An operator closes a session (as its own agent would); recorded with who did it. */
  async closeBy(sessionId: string, actor: Actor, reason: string): Promise<void> {
    const row = await this.#liveRow(sessionId);
    const result = await this.#store.db
      .updateTable('sessions')
      .set({ status: 'closed' })
      .where('id', '=', sessionId)
      .where('status', '=', 'open')
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) {
      throw new ToolgateError('SESSION_NOT_FOUND', 'no open session with this id', { sessionId });
    }
    await this.#ended(sessionId, [actor, 'session.closed', row.agent_id, reason]);
    await withdrawRunApprovals(this.#store.db, sessionId, OPERATOR_CLOSE, this.#clock());
  }

  async #liveRow(sessionId: string): Promise<SessionRow> {
    const row = await this.#store.db
      .selectFrom('sessions')
      .selectAll()
      .where('id', '=', sessionId)
      .executeTakeFirst();
    if (!row || !this.#live(row)) {
      throw new ToolgateError('SESSION_NOT_FOUND', 'no open session with this id', { sessionId });
    }
    return row;
  }

  /** Whether any session of this agent's run has read private data (the flow rule is per run). */
  async runHasReadPrivate(agentId: string, runId: string): Promise<boolean> {
    const row = await this.#store.db
      .selectFrom('sessions')
      .select('id')
      .where('agent_id', '=', agentId)
      .where('run_id', '=', runId)
      .where('private_data_read', '=', 1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Adds the egress bytes a finished call moved to its session's stored counter. */
  async addEgressBytes(sessionId: string, bytes: number): Promise<void> {
    await this.#store.db
      .updateTable('sessions')
      .set((eb) => ({ egress_bytes: eb('egress_bytes', '+', bytes) }))
      .where('id', '=', sessionId)
      .execute();
  }

  /**
   * Records that an untrusted source's result entered the session (and whether it held
   * instruction-like text); returns the session's sources as stored after (untrusted-sources.ts).
   */
  addUntrustedSource(
    sessionId: string,
    toolId: string,
    injection: boolean,
  ): Promise<{ readonly sources: readonly string[]; readonly injectionSeen: boolean }> {
    return addUntrustedSource(this.#store.db, sessionId, toolId, injection);
  }

  /** Keeps what the scan flagged in one result, for reviewers (run-literals.ts). */
  recordInjectionText(text: FlaggedResult): Promise<void> {
    return recordInjectionText(this.#store.db, text);
  }

  /** Where the instruction-like text reaching these scopes came from, and what it said. */
  flaggedResults(scopes: LiteralScopes): Promise<FlaggedResult[]> {
    return flaggedResults(this.#store.db, scopes);
  }

  /**
   * Records destination-like literals an untrusted result brought in, for its run (first sighting
   * wins) and its (agent, user) principal over the window (renewed once older).
   */
  recordDestinationLiterals(
    sighting: {
      runId: string;
      principal: string;
      since: Date;
      toolId: string;
      callId: string;
      at: Date;
    },
    literals: readonly SeenLiteral[],
  ): Promise<void> {
    return recordRunLiterals(this.#store.db, sighting, literals);
  }

  /** Records that a result of this tool held instruction-like text, for the run and principal. */
  recordInjection(sighting: {
    runId: string;
    principal: string;
    since: Date;
    toolId: string;
    callId: string;
    at: Date;
  }): Promise<void> {
    return recordInjectionMark(this.#store.db, sighting);
  }

  /** Where the run or window first saw each hash, and (`injection`) injectionSources: one read. */
  provenanceLookUp(
    scopes: LiteralScopes,
    hashes: readonly string[],
    injection: boolean,
  ): Promise<{ sightings: LiteralSighting[]; injectionSources: string[] }> {
    return runLiteralLookUp(this.#store.db, scopes, hashes, injection);
  }

  /** Any destination the run or the principal's window saw in an untrusted result (the oldest). */
  anyDestinationSighting(scopes: LiteralScopes): Promise<LiteralSighting | undefined> {
    return anyLiteralSighting(this.#store.db, scopes);
  }

  /** The sources whose results brought instruction-like text into the run or the window. */
  injectionSources(scopes: LiteralScopes): Promise<string[]> {
    return injectionSources(this.#store.db, scopes);
  }

  async markPrivateDataRead(sessionId: string): Promise<void> {
    await this.#store.db
      .updateTable('sessions')
      .set({ private_data_read: 1 })
      .where('id', '=', sessionId)
      .execute();
  }

  /**
   * An open, unexpired session of this principal (a bare agent id: an in-process caller, which
   * matches only sessions opened without a credential); anything else is SESSION_NOT_FOUND.
   */
  async require(sessionId: string, who: string | AgentPrincipal): Promise<SessionRow> {
    return this.admit(await this.#row(sessionId), sessionId, who);
  }

  /** As `require`, its counters read now and its permitted set `held`'s (session-row.ts). */
  async requireFresh(
    sessionId: string,
    who: AgentPrincipal,
    held: SessionRow,
  ): Promise<SessionRow> {
    return this.admit(await rowKeepingSet(this.#store.db, sessionId, held), sessionId, who);
  }

  #row(id: string): Promise<SessionRow | undefined> {
    return this.#store.db
      .selectFrom('sessions')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /**
   * As usable, and a live session presented by another principal (another user or credential
   * of the agent, or another agent) is audited as `session.principal_mismatch` before the same
   * SESSION_NOT_FOUND anyone else gets.
   */
  async admit(
    row: SessionRow | undefined,
    sessionId: string,
    who: string | AgentPrincipal,
  ): Promise<SessionRow> {
    const principal = asPrincipal(who);
    if (row && this.#live(row) && !principalMatches(row, principal)) {
      await auditPrincipalMismatch(this.#store, row, principal, this.#clock);
    }
    const usable = this.usable(row, sessionId, principal);
    touchSession(this.#store.db, sessionId, this.#clock());
    return usable;
  }

  /** The row if it is this principal's open, unexpired session; SESSION_NOT_FOUND otherwise. */
  usable(row: SessionRow | undefined, sessionId: string, who: string | AgentPrincipal): SessionRow {
    if (!row || !this.#live(row) || !principalMatches(row, asPrincipal(who))) {
      throw new ToolgateError('SESSION_NOT_FOUND', 'no open session with this id', { sessionId });
    }
    return row;
  }

  #live(row: SessionRow): boolean {
    return row.status === 'open' && Date.parse(row.expires_at) > this.#clock().getTime();
  }

  async view(sessionId: string, who: string | AgentPrincipal): Promise<SessionView> {
    return this.#narrowed(toView(await this.require(sessionId, who)), who);
  }

  /** The view as this request sees it: narrowed by its OAuth token's scopes (token-scopes.ts). */
  async #narrowed(view: SessionView, who: string | AgentPrincipal): Promise<SessionView> {
    const token = tokenCapabilities(who);
    if (token === null) return view;
    const get = (id: string, version: string) => this.#catalog.get(id, version);
    return { ...view, tools: await narrowTools(view.tools, token, get) };
  }

  /** Admin view: the session with what was withheld and why. */
  async inspect(
    sessionId: string,
  ): Promise<SessionView & { withheld: WithheldTool[]; status: string; suspended: boolean }> {
    const row = await this.#store.db
      .selectFrom('sessions')
      .selectAll()
      .where('id', '=', sessionId)
      .executeTakeFirst();
    if (!row)
      throw new ToolgateError('SESSION_NOT_FOUND', 'no session with this id', { sessionId });
    return {
      ...toView(row),
      status: row.status,
      suspended: row.suspended === 1,
      withheld: JSON.parse(row.withheld) as WithheldTool[],
    };
  }

  /** The session's tools with their definitions, in the format an agent framework expects. */
  async exportTools(
    sessionId: string,
    who: string | AgentPrincipal,
    format: ToolFormat,
    /** A front's pre-check (a header agreement): audits nothing, as the call meets the gate. */
    quiet = false,
  ): Promise<unknown[]> {
    const row = quiet ? await this.#row(sessionId) : null;
    const session = row ? this.usable(row, sessionId, who) : await this.require(sessionId, who);
    // Only what this request's OAuth token covers, of what the session holds (token-scopes.ts).
    const token = tokenCapabilities(who);
    const out: unknown[] = [];
    // The set parsed once, shared with the gate's resolve step (session-tool-index.ts).
    for (const t of sessionToolIndex(session).tools) {
      const detail = await this.#catalog.get(t.id, t.version);
      if (!tokenCovers(token, detail)) continue;
      // Upstream resources and prompts are offered as such (session-entries.ts), never as tools.
      if (detail.definition.runtime.kind === 'mcp' && detail.definition.runtime.entry) continue;
      // A tool retired, quarantined or withdrawn as unavailable since the session opened is no
      // longer offered.
      if (
        detail.quarantined ||
        this.#health?.healthOf(t.id, t.version).state === 'unavailable' ||
        (detail.lifecycle !== 'active' && detail.lifecycle !== 'deprecated')
      )
        continue;
      const tool = exportTool(t.name, detail, format);
      out.push(
        format === 'mcp' && t.pins
          ? {
              ...(tool as object),
              _meta: { [VERSIONS_META_KEY]: await this.#majors(t, detail, token) },
            }
          : tool,
      );
    }
    return out;
  }

  /** The majors a caller may pin, default first, as MCP clients read them in `tools/list`. */
  async #majors(
    t: SessionTool,
    detail: ToolVersionDetail,
    token: readonly string[] | null,
  ): Promise<OfferedMajor[]> {
    const out: OfferedMajor[] = [offeredMajor(detail, true)];
    for (const pin of t.pins ?? []) {
      const pinned = await this.#catalog.get(t.id, pin.version).catch(() => null);
      if (!pinned || pinned.quarantined || !isOfferableState(pinned.lifecycle)) continue;
      if (!tokenCovers(token, pinned)) continue;
      out.push(offeredMajor(pinned, false));
    }
    return out;
  }
}

function toView(row: SessionRow): SessionView {
  return {
    id: row.id,
    agent_id: row.agent_id,
    user_id: row.user_id,
    run_id: row.run_id,
    created_at: row.created_at,
    expires_at: row.expires_at,
    tools: JSON.parse(row.tool_set) as SessionTool[],
  };
}
