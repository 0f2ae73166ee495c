/**
 * @module toolgate as an MCP server over Streamable HTTP at /mcp (C15), on the REST
 * port. Every request carries a bearer token (agent API key or JWT); the MCP session is bound to
 * the agent that opened it and to one gate session. A request for another agent's MCP session is
 * answered as if the session did not exist. Protocol faults (bad JSON, oversized bodies, no
 * session) are JSON-RPC errors; the gateway keeps serving everyone else. A request's slot is
 * claimed for its principal (agent and user) once authenticated; what then stands open — a
 * `subscriptions/listen` stream, a session's GET stream, a call waiting for the person at the
 * client — gives the slot back and is counted apart, per agent and per user (`streams`, `waits`).
 */
import { randomBytes } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  type AgentApi,
  RefusalSampler,
  type SecurityEvents,
  stepUpChallenge,
} from '../../api/index.js';
import {
  type AgentPrincipal,
  ERROR_CODES,
  type ErrorCode,
  isToolgateError,
  ToolgateError,
} from '../../core/index.js';
import { bearerChallenge } from '../../domain/identity/index.js';
import { bindingOf, createGatewayServer, sameBinding } from './gateway-server.js';
import { classify, type HeaderRefusal, sentValues } from './header-agreement.js';
import { hintKeepAlive } from './keep-alive-hint.js';
import { ListChangedWatcher, type WatchedSession } from './list-changed.js';
import { ModernMcp } from './modern-http.js';
import { checkOriginHost, type OriginPolicy, originPolicy, originRefusal } from './origin-guard.js';

import { RUN_META_KEY } from './run-meta.js';
import { pickVictim } from './session-eviction.js';

export interface McpHttpOptions {
  readonly version: string;
  /** Largest JSON-RPC message body accepted. */
  readonly bodyLimit: number;
  /**
   * Open MCP sessions across all agents; when full, the least recently used idle session of the
   * agent holding the most is evicted for a newcomer; with none idle, 503 and Retry-After.
   */
  readonly maxSessions?: number;
  /** Open MCP sessions of one agent: one agent cannot use up everyone's sessions (429). */
  readonly maxSessionsPerAgent?: number;
  /** An MCP session unused this long is closed with its gate session. */
  readonly idleMs?: number;
  /** Origins and Hosts accepted besides loopback ones (checked before authentication). */
  readonly originPolicy?: OriginPolicy;
  /** `ttlMs` on 2026-07-28 tools/list results: how long a client may reuse the list. */
  readonly listTtlMs?: number;
  /** Lifetime of a run minted for a 2026-07-28 client (default: a gate session's). */
  readonly runTtlSeconds?: number;
  /** Refusals before authentication recorded in full per minute, action and peer; the rest counted. */
  readonly refusalSample?: number;
  /** The request's admission ticket; null or absent: the request holds nothing to give back. */
  readonly holdOf?: (req: FastifyRequest) => RequestHold | null;
  /** Standing event streams (listen, a session's GET stream); absent: not bounded here. */
  readonly streams?: StandingBound;
  /** Calls waiting for the person at the client; absent: not bounded here. */
  readonly waits?: StandingBound;
}

/**
 * The admission ticket of one request as this front uses it (the HTTP server's, src/edge/rest): claim
 * it for the principal; give the slot back while the request stands and take it again after.
 */
export interface RequestHold {
  /** A refusal (429) when the agent's or the user's share of running requests is used up. */
  claim(agentId: string, userId: string | undefined): ToolgateError | null;
  pause(): void;
  resume(): Promise<ToolgateError | null>;
}

/** Bounds on standing streams or waits, per agent, per user and overall (src/edge/rest). */
export interface StandingBound {
  enter(
    agentId: string,
    userId: string | undefined,
    evict: () => void,
  ):
    | { readonly ok: true; readonly close: () => void }
    | { readonly ok: false; readonly error: ToolgateError };
}

const DEFAULT_LIST_TTL_MS = 5_000;

interface Entry extends WatchedSession {
  readonly transport: StreamableHTTPServerTransport;
  lastSeen: number;
  /** POSTs of this session being answered now: a session with one is never evicted. */
  inFlight: number;
  /** The admission ticket of each JSON-RPC request of this session being answered now. */
  readonly holds: Map<string | number, RequestHold>;
}

const DEFAULT_MAX_SESSIONS = 1_000;
const DEFAULT_MAX_SESSIONS_PER_AGENT = 64;
/** What a refused newcomer is told to wait: sessions go idle or close within seconds under load. */
const SESSION_RETRY_AFTER_S = 5;
const DEFAULT_IDLE_MS = 30 * 60_000;

/**
 * A transport-level fault as a JSON-RPC error. The HTTP status and the JSON-RPC code both come
 * from the one catalogue (docs/architecture.md §7): this front never picks a number itself.
 */
function rpcError(
  reply: FastifyReply,
  code: ErrorCode,
  message: string,
  data?: ToolgateError,
  id: string | number | null = null,
) {
  if (data) void reply.header('retry-after', String(retryAfterOf(data) ?? ''));
  const wire = ERROR_CODES[code];
  return reply
    .status(wire.http)
    .header('content-type', 'application/json')
    .send({
      jsonrpc: '2.0',
      error: { code: wire.jsonRpc, message, ...(data ? { data: data.toBody() } : {}) },
      id,
    });
}

function retryAfterOf(err: ToolgateError): number | undefined {
  const retry = (err.details as { retryAfterSeconds?: unknown } | null)?.retryAfterSeconds;
  return typeof retry === 'number' ? retry : undefined;
}

/** The ids of the JSON-RPC requests in a message (one, or a batch). */
function requestIds(message: unknown): (string | number)[] {
  const out: (string | number)[] = [];
  for (const m of Array.isArray(message) ? message : [message]) {
    const id = (m as { id?: unknown } | null)?.id;
    if (typeof id === 'string' || typeof id === 'number') out.push(id);
  }
  return out;
}

function bearer(req: FastifyRequest): string | undefined {
  return /^Bearer ([^\s]+)$/i.exec(req.headers.authorization ?? '')?.[1];
}

/** Registers /mcp (POST, GET, DELETE) in its own plugin scope; sessions close with the server. */
export async function registerMcpHttp(
  app: FastifyInstance,
  agent: AgentApi,
  /** Where refusals no service sees (a refused Origin…) are recorded. */
  security: SecurityEvents,
  options: McpHttpOptions,
): Promise<void> {
  const sessions = new Map<string, Entry>();
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const maxPerAgent = options.maxSessionsPerAgent ?? DEFAULT_MAX_SESSIONS_PER_AGENT;
  const openBy = (agentId: string) => {
    let n = 0;
    for (const e of sessions.values()) if (e.binding.principal.agentId === agentId) n += 1;
    return n;
  };
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  const watcher = new ListChangedWatcher(
    agent,
    () => sessions.values(),
    (err) => app.log.warn({ err }, 'mcp list_changed refresh failed'),
  );

  const forget = async (id: string, closeGateSession: boolean) => {
    const entry = sessions.get(id);
    if (!entry) return;
    sessions.delete(id);
    if (closeGateSession) {
      await agent.sessions.close(entry.binding.sessionId, entry.binding.principal).catch(() => {});
    }
  };

  /** MCP sessions being initialized: they take a slot before their id exists. */
  let opening = 0;

  /**
   * Takes an idle session's slot for a newcomer: the session leaves the table first (its client's
   * next request is 404, session gone, per the MCP transport spec), then its gate session closes
   * with an audited `session.evicted` event.
   */
  const evict = async (id: string) => {
    const entry = sessions.get(id);
    if (!entry) return;
    sessions.delete(id);
    await entry.transport.close().catch(() => {});
    await agent.sessions
      .evict(entry.binding.sessionId, entry.binding.principal, 'mcp.capacity')
      .catch((err: unknown) => app.log.warn({ err }, 'closing an evicted gate session failed'));
  };

  const idleSweep = setInterval(
    () => {
      const now = Date.now();
      for (const [id, entry] of sessions) {
        if (now - entry.lastSeen > idleMs) {
          void entry.transport.close().catch(() => {});
          void forget(id, true);
        }
      }
    },
    Math.min(60_000, idleMs),
  );
  idleSweep.unref();

  const refusals = new RefusalSampler(security, {
    ...(options.refusalSample !== undefined ? { sample: options.refusalSample } : {}),
  });
  const modern = new ModernMcp(agent, {
    version: options.version,
    listTtlMs: options.listTtlMs ?? DEFAULT_LIST_TTL_MS,
    ...(options.runTtlSeconds !== undefined ? { runTtlSeconds: options.runTtlSeconds } : {}),
    onError: (err) => app.log.error({ err }, 'mcp request failed'),
    // Audited like a header mismatch (sampled): a flood of forged states cannot flood the log.
    onRefusedState: (err) =>
      refusals
        .record('mcp.request_state_refused', {
          code: err.code,
          reason: String((err.details as { reason?: unknown }).reason ?? ''),
        })
        .catch((e: unknown) => app.log.error({ err: e }, 'security event not recorded')),
  });
  /** A header that does not mirror the body: 400 HeaderMismatch, audited (sampled). */
  const refuseHeaders = async (
    req: FastifyRequest,
    reply: FastifyReply,
    r: HeaderRefusal,
    m?: unknown,
  ) => {
    // The reason may quote a header or the body's method as sent: each hashed where it appears.
    const sent = sentValues(req.headers, m);
    const details = { header: r.header, reason: r.reason.slice(0, 300) };
    await refusals.record('mcp.header_mismatch', details, { hashed: { remote: req.ip }, sent });
    const err = new ToolgateError('MCP_HEADER_MISMATCH', r.reason, {
      header: r.header,
      reason: r.reason,
    });
    return rpcError(reply, err.code, err.message, err);
  };

  app.addHook('onClose', async () => {
    clearInterval(idleSweep);
    await modern.close().catch(() => {});
    await refusals.stop();
    watcher.stop();
    const open = [...sessions.values()];
    sessions.clear();
    await Promise.all(open.map((e) => e.transport.close().catch(() => {})));
  });

  await app.register(async (scope) => {
    // The body is parsed here, not by the REST parser: a fault must be a JSON-RPC error.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      '*',
      { parseAs: 'string', bodyLimit: options.bodyLimit },
      (_req, body, done) => done(null, body),
    );
    scope.setErrorHandler((err, _req, reply) => {
      const status = (err as { statusCode?: number }).statusCode;
      if (status === 413) {
        return rpcError(reply, 'PAYLOAD_TOO_LARGE', `message over ${options.bodyLimit} bytes`);
      }
      if (isToolgateError(err) && err.code === 'STORE_UNAVAILABLE') {
        return rpcError(reply, 'STORE_UNAVAILABLE', 'the gateway cannot reach its database');
      }
      // A refusal by a cap (LIMIT_REACHED on the gate session) keeps its code and Retry-After.
      if (isToolgateError(err) && retryAfterOf(err) !== undefined) {
        return rpcError(reply, err.code, err.message, err);
      }
      app.log.error({ err }, 'mcp request failed');
      return rpcError(reply, 'INTERNAL', 'internal error');
    });

    const route = { config: { auth: 'public' as const }, schema: { hide: true } };
    const origins = options.originPolicy ?? originPolicy();

    // Before authentication: a page on another site (or one that rebound its DNS name here) is
    // refused whatever token it carries, and the attempt is audited.
    scope.addHook('onRequest', async (req, reply) => {
      const origin = req.headers.origin;
      const verdict = checkOriginHost(
        typeof origin === 'string' ? origin : undefined,
        req.headers.host,
        origins,
      );
      if (verdict.ok) return;
      await refusals.record('mcp.origin_refused', ...originRefusal(verdict, req.ip));
      return rpcError(
        reply,
        'FORBIDDEN',
        verdict.reason === 'origin'
          ? 'this Origin may not use the gateway'
          : 'this Host is not served by the gateway',
      );
    });

    // Clients keep their connection while idle instead of opening a new one per call.
    scope.addHook('onRequest', async (req, reply) => {
      hintKeepAlive(req.raw, reply.raw, app.server.keepAliveTimeout);
    });

    /**
     * The gate's step-up refusal of a tools/call whose OAuth token's scopes miss the tool, or
     * null: asked before the SDK dispatches the call, as it is answered at the HTTP level. The
     * gate decides (its scope step) and audits it, in the session or run the request names (it
     * checks it is the caller's), else as an event of the principal.
     */
    const stepUp = async (
      req: FastifyRequest,
      principal: AgentPrincipal,
      message: unknown,
    ): Promise<ToolgateError<'INSUFFICIENT_SCOPE'> | null> => {
      const m = message as {
        method?: unknown;
        params?: { name?: unknown; arguments?: unknown; _meta?: Record<string, unknown> };
      } | null;
      if (typeof m !== 'object' || m === null || m.method !== 'tools/call') return null;
      if (!agent.oauth || !principal.oauth) return null;
      // 2026-07-28: the run handle (a gate session id); earlier eras: the MCP session's.
      const run = m.params?._meta?.[RUN_META_KEY];
      const header = req.headers['mcp-session-id'];
      const sessionId =
        typeof run === 'string'
          ? run
          : typeof header === 'string'
            ? sessions.get(header)?.binding.sessionId
            : undefined;
      return agent.stepUp({ principal, sessionId }, m.params?.name, m.params?.arguments, 'mcp');
    };

    const identify = async (req: FastifyRequest, reply: FastifyReply) => {
      const token = bearer(req);
      const identity = token ? await agent.authenticate(token, req.ip) : null;
      if (!identity) {
        reply.header(
          'www-authenticate',
          agent.oauth
            ? bearerChallenge({
                resourceMetadata: agent.oauth.metadataUrl,
                ...(token ? { error: 'invalid_token' } : {}),
              })
            : 'Bearer',
        );
        rpcError(reply, 'UNAUTHENTICATED', 'send Authorization: Bearer <agent API key or JWT>');
        return null;
      }
      // The principal's share of running requests: its agent and its user, whatever credential.
      const refusal = options.holdOf?.(req)?.claim(identity.agentId, identity.user?.id);
      if (refusal) {
        rpcError(reply, refusal.code, refusal.message, refusal);
        return null;
      }
      return identity;
    };

    /**
     * Counts the response as a standing stream of the principal (refused at its bound: answered
     * here, and false), and gives the request's slot back once the stream stands.
     */
    const stand = (
      req: FastifyRequest,
      reply: FastifyReply,
      identity: { agentId: string; user?: { id: string } },
    ): (() => void) | null => {
      const standing = options.streams?.enter(identity.agentId, identity.user?.id, () =>
        reply.raw.destroy(),
      );
      if (standing && !standing.ok) {
        rpcError(reply, standing.error.code, standing.error.message, standing.error);
        return null;
      }
      if (standing) reply.raw.once('close', standing.close);
      return () => options.holdOf?.(req)?.pause();
    };

    /**
     * The caller's own session — same agent, credential and token user as the one that opened
     * it — or a 404 that says nothing about anyone else's (a live one is audited as presented by
     * another principal).
     */
    const own = async (
      req: FastifyRequest,
      reply: FastifyReply,
      presented: AgentPrincipal,
    ): Promise<Entry | null> => {
      const id = req.headers['mcp-session-id'];
      const entry = typeof id === 'string' ? sessions.get(id) : undefined;
      if (!entry || !sameBinding(entry.binding, presented)) {
        // The gate session's check writes the security event (and refuses, as here).
        if (entry) await agent.sessions.require(entry.binding.sessionId, presented).catch(() => {});
        rpcError(reply, 'MCP_SESSION_NOT_FOUND', 'session not found');
        return null;
      }
      entry.lastSeen = Date.now();
      return entry;
    };

    scope.post('/mcp', route, async (req, reply) => {
      const body = typeof req.body === 'string' ? req.body : '';
      let message: unknown;
      let parsed = true;
      try {
        message = JSON.parse(body);
      } catch {
        parsed = false;
      }
      // The era, chosen per request (a `_meta` envelope claim is 2026-07-28); the headers of a
      // modern request must mirror its body before anyone looks at who sent it.
      const era = parsed ? classify(req.headers, message) : ({ era: 'legacy' } as const);
      if (era.era === 'refused') return refuseHeaders(req, reply, era.refusal, message);
      const identity = await identify(req, reply);
      if (!identity) return reply;
      if (!parsed) return rpcError(reply, 'INPUT_MALFORMED', 'the body is not valid JSON');
      if (era.era === 'invalid') {
        return rpcError(reply, 'INPUT_INVALID', era.message, undefined, era.id);
      }
      // An OAuth token whose scopes do not reach a tool the agent is granted: a step-up challenge
      // (403 insufficient_scope naming the scopes), so the client can ask for a wider token.
      const refused = await stepUp(req, identity, message);
      if (refused) {
        reply.header('www-authenticate', stepUpChallenge(agent.oauth, refused.details.scope));
        return rpcError(reply, 'INSUFFICIENT_SCOPE', refused.message, refused);
      }
      if (era.era === 'modern') {
        if (era.method === 'tools/call') {
          const refusal = await modern.paramRefusal(identity, era.params, req.headers);
          if (refusal) return refuseHeaders(req, reply, refusal, message);
        }
        // A listen stream stands until the client leaves: counted as a stream, not a request.
        const stood = era.method === 'subscriptions/listen' ? stand(req, reply, identity) : null;
        if (era.method === 'subscriptions/listen' && !stood) return reply;
        await modern.serve(req, reply, identity, body, message);
        stood?.();
        return reply;
      }
      if (req.headers['mcp-session-id'] !== undefined) {
        const entry = await own(req, reply, identity);
        if (!entry) return reply;
        entry.inFlight += 1;
        const hold = options.holdOf?.(req) ?? null;
        const ids = hold ? requestIds(message) : [];
        for (const id of ids) if (hold) entry.holds.set(id, hold);
        reply.raw.once('close', () => {
          entry.inFlight -= 1;
          entry.lastSeen = Date.now();
          for (const id of ids) if (entry.holds.get(id) === hold) entry.holds.delete(id);
        });
        reply.hijack();
        await entry.transport.handleRequest(req.raw, reply.raw, message);
        return reply;
      }
      if (!isInitializeRequest(message)) {
        return rpcError(reply, 'MCP_SESSION_REQUIRED', 'no session: send initialize first');
      }
      if (openBy(identity.agentId) >= maxPerAgent) {
        const err = new ToolgateError(
          'LIMIT_REACHED',
          `this agent has ${maxPerAgent} open MCP sessions; close one (DELETE /mcp) first`,
          {
            limit: 'sessions_per_agent',
            max: maxPerAgent,
            retryAfterSeconds: SESSION_RETRY_AFTER_S,
          },
        );
        return rpcError(reply, err.code, err.message, err);
      }
      // The slot is taken before any await, so parallel newcomers cannot overshoot the limit.
      opening += 1;
      try {
        if (sessions.size + opening > maxSessions) {
          const victim = pickVictim(
            [...sessions].map(([id, e]) => [
              id,
              { agentId: e.binding.principal.agentId, lastSeen: e.lastSeen, inFlight: e.inFlight },
            ]),
          );
          if (victim === null) {
            const err = new ToolgateError(
              'OVERLOADED',
              `all ${maxSessions} MCP sessions are busy; retry later`,
              { limit: 'mcp_sessions', max: maxSessions, retryAfterSeconds: SESSION_RETRY_AFTER_S },
            );
            return rpcError(reply, err.code, err.message, err);
          }
          await evict(victim);
        }
        return await initialize(req, reply, identity, message);
      } finally {
        opening -= 1;
      }
    });

    const initialize = async (
      req: FastifyRequest,
      reply: FastifyReply,
      identity: NonNullable<Awaited<ReturnType<typeof identify>>>,
      message: unknown,
    ) => {
      const gateSession = await agent.sessions.open(identity);
      const binding = bindingOf(identity, gateSession.id);
      const server = createGatewayServer(agent, binding, {
        version: options.version,
        onError: (err) => app.log.error({ err }, 'mcp tool call failed'),
        // No response goes out for a cancelled call; its stream is closed instead of left open.
        onCancelled: (requestId) => transport.closeSSEStream(requestId),
        standBy: async (requestId, wait) => {
          const entry = transport.sessionId ? sessions.get(transport.sessionId) : undefined;
          const hold = entry?.holds.get(requestId) ?? null;
          const stop = new AbortController();
          const standing = options.waits?.enter(
            binding.principal.agentId,
            binding.principal.user?.id,
            () => stop.abort(),
          );
          if (standing && !standing.ok) return { ok: false };
          hold?.pause();
          try {
            const value = await wait(stop.signal);
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
          sessions.set(id, {
            transport,
            server,
            binding,
            lastSeen: Date.now(),
            inFlight: 0,
            holds: new Map(),
          });
          watcher.start();
        },
        onsessionclosed: (id) => forget(id, true),
      });
      transport.onclose = () => {
        if (transport.sessionId) void forget(transport.sessionId, true);
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
    };

    const passThrough = async (req: FastifyRequest, reply: FastifyReply) => {
      const identity = await identify(req, reply);
      if (!identity) return reply;
      const entry = await own(req, reply, identity);
      if (!entry) return reply;
      // A session's GET stream stands until the session ends: counted as a stream, not a request.
      const stood = req.method === 'GET' ? stand(req, reply, identity) : null;
      if (req.method === 'GET' && !stood) return reply;
      // The transport answers a GET only when its stream ends: the slot is given back before.
      stood?.();
      reply.hijack();
      await entry.transport.handleRequest(req.raw, reply.raw);
      return reply;
    };
    scope.get('/mcp', route, passThrough);
    scope.delete('/mcp', route, passThrough);
  });
}
