/**
 * @module The 2025 eras of /mcp (C15, docs/architecture.md §6): what only they have — MCP
 * sessions. Each is bound to the principal that opened it and to one gate session, served by its
 * own v1 SDK server (gateway-server.ts) over a Streamable HTTP transport; a request for another
 * principal's session is answered as if it did not exist. Sessions are bounded overall and per
 * agent (an idle one is evicted for a newcomer, session-eviction.ts), closed when idle, and kept
 * current by list_changed (list-changed.ts). Authentication, the step-up check and the era's
 * choice happened before, in the one request path (mcp-http.ts).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { AgentApi } from '../../api/index.js';
import { ToolgateError } from '../../core/index.js';
import {
  bindingOf,
  createGatewayServer,
  type McpBinding,
  requestAuth,
  sameBinding,
} from './gateway-server.js';
import { ListChangedWatcher, type WatchedSession } from './list-changed.js';
import type { RequestHold, StandingBound } from './request-bounds.js';
import { rpcError } from './rpc-reply.js';
import { pickFairVictim, pickVictim } from './session-eviction.js';

type Identity = NonNullable<Awaited<ReturnType<AgentApi['authenticate']>>>;

export interface SessionEraOptions {
  readonly version: string;
  readonly maxSessions?: number;
  readonly maxSessionsPerAgent?: number;
  /** A principal's share of its agent's sessions, a fraction (mcp-http.ts). */
  readonly userSessionShare?: number;
  readonly idleMs?: number;
  readonly holdOf?: (req: FastifyRequest) => RequestHold | null;
  readonly waits?: StandingBound;
  /** How long a call that waits for approval is held for its decision (approval-hold.ts). */
  readonly approvalWaitMs?: number;
}

interface Entry extends WatchedSession {
  readonly transport: StreamableHTTPServerTransport;
  lastSeen: number;
  /** POSTs of this session being answered now: a session with one is never evicted. */
  inFlight: number;
  /** The admission ticket of each JSON-RPC request of this session being answered now. */
  readonly holds: Map<string | number, RequestHold>;
  /** Aborted when the connection of that request closes before its answer (the client left). */
  readonly gone: Map<string | number, AbortSignal>;
}

const DEFAULT_MAX_SESSIONS = 1_000;
const DEFAULT_MAX_SESSIONS_PER_AGENT = 64;
/** As the gate's default share of an agent's sessions per principal (its `userSessionShare`). */
const DEFAULT_USER_SESSION_SHARE = 0.5;
/**
 * What a newcomer refused for want of a process-wide slot is told to wait: an idle session is
 * evicted for it as soon as one stands idle, within seconds under load.
 */
const SESSION_RETRY_AFTER_S = 5;
/**
 * What an agent at its own session cap is told to wait, as REST and 2026-07-28 tell it for the
 * same cap (SESSION_CAP_RETRY_AFTER_S, agent-caps.ts): nothing frees its slots but closing one.
 */
const AGENT_CAP_RETRY_AFTER_S = 30;
const DEFAULT_IDLE_MS = 30 * 60_000;
/** Why a session ended for a smaller holder's newcomer, as gate sessions say it (agent-caps.ts). */
const FAIR_EVICTION = 'evicted_for_fairness';

/** The ids of the JSON-RPC requests in a message (one, or a batch). */
function requestIds(message: unknown): (string | number)[] {
  const out: (string | number)[] = [];
  for (const m of Array.isArray(message) ? message : [message]) {
    const id = (m as { id?: unknown } | null)?.id;
    if (typeof id === 'string' || typeof id === 'number') out.push(id);
  }
  return out;
}

export class SessionEra {
  readonly #agent: AgentApi;
  readonly #log: FastifyBaseLogger;
  readonly #options: SessionEraOptions;
  readonly #sessions = new Map<string, Entry>();
  readonly #maxSessions: number;
  readonly #maxPerAgent: number;
  /** Sessions of one principal of an agent within which waiting on an approval spares them. */
  readonly #share: number;
  readonly #watcher: ListChangedWatcher;
  readonly #idleSweep: NodeJS.Timeout;
  /** MCP sessions being initialized: they take a slot before their id exists. */
  #opening = 0;

  constructor(agent: AgentApi, log: FastifyBaseLogger, options: SessionEraOptions) {
    this.#agent = agent;
    this.#log = log;
    this.#options = options;
    this.#maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
    this.#maxPerAgent = options.maxSessionsPerAgent ?? DEFAULT_MAX_SESSIONS_PER_AGENT;
    this.#share = Math.max(
      1,
      Math.floor(this.#maxPerAgent * (options.userSessionShare ?? DEFAULT_USER_SESSION_SHARE)),
    );
    this.#watcher = new ListChangedWatcher(
      agent,
      () => this.#sessions.values(),
      (err) => log.warn({ err }, 'mcp list_changed refresh failed'),
    );
    const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
    this.#idleSweep = setInterval(
      () => {
        const now = Date.now();
        for (const [id, entry] of this.#sessions) {
          if (now - entry.lastSeen > idleMs) {
            void entry.transport.close().catch(() => {});
            void this.#forget(id, true);
          }
        }
      },
      Math.min(60_000, idleMs),
    );
    this.#idleSweep.unref();
  }

  /** The open sessions by id, as the one request path reads them (the step-up audit). */
  get sessions(): ReadonlyMap<string, { readonly binding: McpBinding }> {
    return this.#sessions;
  }

  async close(): Promise<void> {
    clearInterval(this.#idleSweep);
    this.#watcher.stop();
    const open = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.all(open.map((e) => e.transport.close().catch(() => {})));
  }

  /**
   * Ends each session's GET stream, as the transport ends it (the server is stopping); the
   * sessions, their gate sessions and the approvals their calls wait for are kept.
   */
  endStreams(): void {
    for (const entry of this.#sessions.values()) entry.transport.closeStandaloneSSEStream();
  }

  /** A POST of the 2025 eras: on the caller's own session, or an initialize opening one. */
  async post(req: FastifyRequest, reply: FastifyReply, identity: Identity, message: unknown) {
    if (req.headers['mcp-session-id'] !== undefined) {
      const entry = await this.#own(req, reply, identity);
      if (!entry) return reply;
      entry.inFlight += 1;
      const hold = this.#options.holdOf?.(req) ?? null;
      const ids = requestIds(message);
      for (const id of ids) if (hold) entry.holds.set(id, hold);
      // A wait of this request (a held call, a prompt) ends when its client leaves: a call held
      // for an approval must not run for nobody, and take the approval from the client's retry.
      const left = new AbortController();
      for (const id of ids) entry.gone.set(id, left.signal);
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) left.abort();
        entry.inFlight -= 1;
        entry.lastSeen = Date.now();
        for (const id of ids) if (entry.holds.get(id) === hold) entry.holds.delete(id);
        for (const id of ids) if (entry.gone.get(id) === left.signal) entry.gone.delete(id);
      });
      reply.hijack();
      // This request's principal (its token's scopes), not the one that opened the session.
      const raw: IncomingMessage & { auth?: AuthInfo } = req.raw;
      raw.auth = requestAuth(identity);
      await entry.transport.handleRequest(raw, reply.raw, message);
      return reply;
    }
    if (!isInitializeRequest(message)) {
      return rpcError(reply, 'MCP_SESSION_REQUIRED', 'no session: send initialize first');
    }
    // At the agent's own cap a smaller holder ends the biggest holder's LRU idle session.
    const fair = this.#atAgentCap(identity) ? await this.#fairVictim(identity) : undefined;
    if (fair) await this.#evict(fair, FAIR_EVICTION);
    else if (fair === null) {
      const err = new ToolgateError(
        'LIMIT_REACHED',
        `this agent has ${this.#maxPerAgent} open MCP sessions; close one (DELETE /mcp) first`,
        {
          limit: 'sessions_per_agent',
          max: this.#maxPerAgent,
          retryAfterSeconds: AGENT_CAP_RETRY_AFTER_S,
        },
      );
      return rpcError(reply, err.code, err.message, err);
    }
    // The slot is taken before any await, so parallel newcomers cannot overshoot the limit.
    this.#opening += 1;
    try {
      if (this.#sessions.size + this.#opening > this.#maxSessions) {
        const all = [...this.#sessions];
        const waiting = await this.#waiting(all.map(([, e]) => e));
        const victim = pickVictim(
          all.map(([id, e]) => [
            id,
            {
              agentId: e.binding.principal.agentId,
              lastSeen: e.lastSeen,
              inFlight: e.inFlight,
              waiting: waiting.has(e.binding.sessionId),
            },
          ]),
        );
        if (victim === null) {
          const max = this.#maxSessions;
          const err = new ToolgateError(
            'OVERLOADED',
            `all ${max} MCP sessions are busy; retry later`,
            { limit: 'mcp_sessions', max, retryAfterSeconds: SESSION_RETRY_AFTER_S },
          );
          return rpcError(reply, err.code, err.message, err);
        }
        await this.#evict(victim);
      }
      return await this.#initialize(req, reply, identity, message);
    } finally {
      this.#opening -= 1;
    }
  }

  /**
   * A GET (the session's event stream) or DELETE on the caller's own session. `stand` counts a
   * GET's stream as standing (null: refused at its bound, already answered) and gives the
   * request's slot back before the transport answers, which it does only when the stream ends.
   */
  async passThrough(
    req: FastifyRequest,
    reply: FastifyReply,
    identity: Identity,
    stand: () => (() => void) | null,
  ) {
    const entry = await this.#own(req, reply, identity);
    if (!entry) return reply;
    const stood = req.method === 'GET' ? stand() : null;
    if (req.method === 'GET' && !stood) return reply;
    stood?.();
    reply.hijack();
    await entry.transport.handleRequest(req.raw, reply.raw);
    return reply;
  }

  #atAgentCap(identity: Identity): boolean {
    let n = 0;
    for (const e of this.#sessions.values())
      if (e.binding.principal.agentId === identity.agentId) n += 1;
    return n >= this.#maxPerAgent;
  }

  /**
   * The gate sessions of `entries` whose calls wait on an approval: never evicted. When the store
   * cannot say, every one of them (nothing is evicted; the newcomer is refused instead).
   */
  async #waiting(entries: readonly Entry[]): Promise<ReadonlySet<string>> {
    const ids = entries.map((e) => e.binding.sessionId);
    return this.#agent.waitingOnApproval(ids).catch((err: unknown) => {
      this.#log.warn({ err }, 'reading the approvals MCP sessions wait on failed');
      return new Set(ids);
    });
  }

  /** The session a newcomer at its agent's full cap may end (session-eviction.ts), or null. */
  async #fairVictim(identity: Identity): Promise<string | null> {
    const mine = [...this.#sessions].filter(
      ([, e]) => e.binding.principal.agentId === identity.agentId,
    );
    const waiting = await this.#waiting(mine.map(([, e]) => e));
    return pickFairVictim(
      mine.map(([id, e]) => [
        id,
        {
          holder: e.binding.principal.user?.id ?? null,
          lastSeen: e.lastSeen,
          inFlight: e.inFlight,
          waiting: waiting.has(e.binding.sessionId),
        },
      ]),
      identity.user?.id ?? null,
      this.#share,
    );
  }

  async #forget(id: string, closeGateSession: boolean): Promise<void> {
    const entry = this.#sessions.get(id);
    if (!entry) return;
    this.#sessions.delete(id);
    if (closeGateSession) {
      await this.#agent.sessions
        .close(entry.binding.sessionId, entry.binding.principal)
        .catch(() => {});
    }
  }

  /**
   * Takes an idle session's slot for a newcomer: the session leaves the table first (its client's
   * next request is 404, session gone, per the MCP transport spec), then its gate session closes
   * with an audited `session.evicted` event.
   */
  async #evict(id: string, reason = 'mcp.capacity'): Promise<void> {
    const entry = this.#sessions.get(id);
    if (!entry) return;
    this.#sessions.delete(id);
    await entry.transport.close().catch(() => {});
    await this.#agent.sessions
      .evict(entry.binding.sessionId, entry.binding.principal, reason)
      .catch((err: unknown) => this.#log.warn({ err }, 'closing an evicted gate session failed'));
  }

  /**
   * The caller's own session — same agent, credential and token user as the one that opened
   * it — or a 404 that says nothing about anyone else's (a live one is audited as presented by
   * another principal).
   */
  async #own(req: FastifyRequest, reply: FastifyReply, identity: Identity): Promise<Entry | null> {
    const id = req.headers['mcp-session-id'];
    const entry = typeof id === 'string' ? this.#sessions.get(id) : undefined;
    const presented = identity;
    if (!entry || !sameBinding(entry.binding, presented)) {
      // The gate session's check writes the security event (and refuses, as here).
      if (entry) {
        await this.#agent.sessions.require(entry.binding.sessionId, presented).catch(() => {});
      }
      rpcError(reply, 'MCP_SESSION_NOT_FOUND', 'session not found');
      return null;
    }
    entry.lastSeen = Date.now();
    return entry;
  }

  async #initialize(
    req: FastifyRequest,
    reply: FastifyReply,
    identity: Identity,
    message: unknown,
  ) {
    const agent = this.#agent;
    const gateSession = await agent.sessions.open(identity);
    const binding = bindingOf(identity, gateSession.id);
    const server = createGatewayServer(agent, binding, {
      version: this.#options.version,
      ...(this.#options.approvalWaitMs !== undefined
        ? { approvalWaitMs: this.#options.approvalWaitMs }
        : {}),
      onError: (err) => this.#log.error({ err }, 'mcp tool call failed'),
      // No response goes out for a cancelled call; its stream is closed instead of left open.
      onCancelled: (requestId) => transport.closeSSEStream(requestId),
      standBy: async (requestId, wait) => {
        const entry = transport.sessionId ? this.#sessions.get(transport.sessionId) : undefined;
        const hold = entry?.holds.get(requestId) ?? null;
        // Every POST of the session registers its requests until its connection closes: none
        // registered means the client already left, and nothing waits for it.
        const gone = entry?.gone.get(requestId);
        if (!gone || gone.aborted) return { ok: false };
        const stop = new AbortController();
        const standing = this.#options.waits?.enter(
          binding.principal.agentId,
          binding.principal.user?.id,
          () => stop.abort(),
        );
        if (standing && !standing.ok) return { ok: false };
        hold?.pause();
        try {
          const value = await wait(AbortSignal.any([stop.signal, gone]));
          // The call goes on as work again: it queues for a slot like a new request.
          if (hold && (await hold.resume())) return { ok: false };
          return { ok: true, value };
        } finally {
          if (standing) standing.close();
        }
      },
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => `mcp_${randomBytes(18).toString('base64url')}`,
      onsessioninitialized: (id) => {
        this.#sessions.set(id, {
          transport,
          server,
          binding,
          lastSeen: Date.now(),
          inFlight: 0,
          holds: new Map(),
          gone: new Map(),
        });
        this.#watcher.start();
      },
      onsessionclosed: (id) => this.#forget(id, true),
    });
    transport.onclose = () => {
      if (transport.sessionId) void this.#forget(transport.sessionId, true);
    };
    await server.connect(transport);
    reply.hijack();
    await transport.handleRequest(req.raw, reply.raw, message);
    if (!transport.sessionId) {
      // The initialize was refused by the transport (e.g. a bad Accept header): nothing to keep.
      await agent.sessions.close(binding.sessionId, binding.principal).catch(() => {});
      await server.close().catch(() => {});
    }
    return reply;
  }
}
