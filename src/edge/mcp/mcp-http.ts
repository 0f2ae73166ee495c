/**
 * @module toolgate as an MCP server over Streamable HTTP at /mcp (C15), on the REST port: the one
 * request path of both protocol eras (docs/architecture.md §6). Every request goes the same way —
 * Origin and Host checked, the body parsed, the era classified (header-agreement.ts), the bearer
 * token (agent API key or JWT) authenticated and the request's slot claimed for its principal
 * (agent and user), a tools/call's OAuth step-up checked — and only then splits where the
 * protocols differ: the 2025 eras' sessions (session-era.ts) or a 2026-07-28 stateless request
 * (modern-http.ts). Both eras call the gate the same way (gate-call.ts) and shape its answer in
 * one module (result-shape.ts). Protocol faults (bad JSON, oversized bodies, no session) are
 * JSON-RPC errors (rpc-reply.ts); the gateway keeps serving everyone else. What stands open — a
 * `subscriptions/listen` stream, a session's GET stream, a call waiting for the person at the
 * client — gives the request's slot back and is counted apart, per agent and per user
 * (`streams`, `waits`).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  type AgentApi,
  RefusalSampler,
  type SecurityEvents,
  stepUpChallenge,
} from '../../api/index.js';
import { type AgentPrincipal, isToolgateError, ToolgateError } from '../../core/index.js';
import { bearerChallenge } from '../../domain/identity/index.js';
import type { StandBy } from './approval-hold.js';
import { classify, type HeaderRefusal, sentValues } from './header-agreement.js';
import { hintKeepAlive } from './keep-alive-hint.js';
import { ModernMcp } from './modern-http.js';
import { checkOriginHost, type OriginPolicy, originPolicy, originRefusal } from './origin-guard.js';
import type { RequestHold, StandingBound } from './request-bounds.js';
import { noteRpcMethod } from './rpc-method.js';
import { retryAfterOf, rpcError } from './rpc-reply.js';
import { RUN_META_KEY } from './run-meta.js';
import { SessionEra } from './session-era.js';

export type { RequestHold, StandingBound } from './request-bounds.js';

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
  /**
   * A principal's share of its agent's sessions (a fraction, as the gate's `userSessionShare`):
   * within it a session waiting on an approval is never evicted for fairness; past it, it may be.
   */
  readonly userSessionShare?: number;
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
  /**
   * Calls waiting for the person at the client — an elicitation's answer, or a held call's
   * approval (approval-hold.ts); absent: not bounded here.
   */
  readonly waits?: StandingBound;
  /**
   * How long one call (one round, on 2026-07-28) that waits for approval is held open for its
   * decision before it is answered still pending; 0 answers at once. Default 45 s.
   */
  readonly approvalWaitMs?: number;
}

const DEFAULT_LIST_TTL_MS = 5_000;

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
  // The 2025 eras' sessions: the only state one era has and the other has not.
  const legacy = new SessionEra(agent, app.log, {
    version: options.version,
    ...(options.maxSessions !== undefined ? { maxSessions: options.maxSessions } : {}),
    ...(options.maxSessionsPerAgent !== undefined
      ? { maxSessionsPerAgent: options.maxSessionsPerAgent }
      : {}),
    ...(options.userSessionShare !== undefined
      ? { userSessionShare: options.userSessionShare }
      : {}),
    ...(options.idleMs !== undefined ? { idleMs: options.idleMs } : {}),
    ...(options.holdOf ? { holdOf: options.holdOf } : {}),
    ...(options.waits ? { waits: options.waits } : {}),
    ...(options.approvalWaitMs !== undefined ? { approvalWaitMs: options.approvalWaitMs } : {}),
  });
  const sessions = legacy.sessions;
  const refusals = new RefusalSampler(security, {
    ...(options.refusalSample !== undefined ? { sample: options.refusalSample } : {}),
  });
  const modern = new ModernMcp(agent, {
    version: options.version,
    listTtlMs: options.listTtlMs ?? DEFAULT_LIST_TTL_MS,
    ...(options.runTtlSeconds !== undefined ? { runTtlSeconds: options.runTtlSeconds } : {}),
    ...(options.approvalWaitMs !== undefined ? { approvalWaitMs: options.approvalWaitMs } : {}),
    standBy: (req, left, principal) => standingWait(req, left, principal, options),
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

  // A stop ends every standing stream with a close its client sees (src/edge/rest/drain.ts).
  app.addHook(
    'preClose',
    async () => void (await Promise.all([modern.endStreams(), legacy.endStreams()])),
  );
  app.addHook('onClose', async () => {
    await modern.close().catch(() => {});
    await refusals.stop();
    await legacy.close();
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
     * The gate's step-up refusal of a tools/call, resources/read or prompts/get whose OAuth
     * token's scopes miss what it names, or null: asked before the SDK dispatches the call, as it
     * is answered at the HTTP level. The gate decides (its steps up to `scope`, the name read as
     * the session lists it) and audits it, in the session or run the request is served in (it
     * checks it is the caller's), else as an event of the principal.
     */
    const stepUp = async (
      req: FastifyRequest,
      principal: AgentPrincipal,
      message: unknown,
      modernEra: boolean,
    ): Promise<ToolgateError<'INSUFFICIENT_SCOPE'> | null> => {
      if (!agent.oauth || !principal.oauth) return null;
      const target = stepUpTarget(message);
      if (!target) return null;
      const { ref, params } = target;
      // 2026-07-28: the run handle (a gate session id), else the default run it will be served
      // in; earlier eras: the MCP session's.
      const run = params?._meta?.[RUN_META_KEY];
      const header = req.headers['mcp-session-id'];
      const sessionId =
        typeof run === 'string'
          ? run
          : modernEra
            ? await modern.defaultRun(principal)
            : typeof header === 'string'
              ? sessions.get(header)?.binding.sessionId
              : undefined;
      const args = target.method === 'resources/read' ? undefined : params?.arguments;
      return agent.stepUp({ principal, sessionId }, ref, args, 'mcp');
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

    scope.post('/mcp', route, async (req, reply) => {
      const body = typeof req.body === 'string' ? req.body : '';
      let message: unknown;
      let parsed = true;
      try {
        message = JSON.parse(body);
        noteRpcMethod(req, message);
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
      const refused = await stepUp(req, identity, message, era.era === 'modern');
      if (refused) {
        reply.header('www-authenticate', stepUpChallenge(agent.oauth, refused.details.scope));
        return rpcError(reply, 'INSUFFICIENT_SCOPE', refused.message, refused);
      }
      if (era.era === 'modern') {
        // A tools/call's Mcp-Param-* headers go to the gate with the call (modern-http.ts): its
        // `headers` step compares them with the tool version it resolves.
        // A listen stream stands until the client leaves: counted as a stream, not a request.
        const stood = era.method === 'subscriptions/listen' ? stand(req, reply, identity) : null;
        if (era.method === 'subscriptions/listen' && !stood) return reply;
        await modern.serve(req, reply, identity, body, message);
        stood?.();
        return reply;
      }
      return legacy.post(req, reply, identity, message);
    });

    // GET (a session's event stream) and DELETE exist only in the 2025 eras: their sessions.
    const passThrough = async (req: FastifyRequest, reply: FastifyReply) => {
      const identity = await identify(req, reply);
      if (!identity) return reply;
      // A session's GET stream stands until the session ends: counted as a stream, not a request.
      return legacy.passThrough(req, reply, identity, () => stand(req, reply, identity));
    };
    scope.get('/mcp', route, passThrough);
    scope.delete('/mcp', route, passThrough);
  });
}

/**
 * A held call's wait as a standing wait of the request's principal (`waits`): the request's slot
 * is given back while it waits and taken again after; refused at the principal's bound (the call
 * is answered pending at once), ended by a stop, by the bound making room for another, or by the
 * client leaving (`left`: its connection closed before the answer).
 */
function standingWait(
  req: FastifyRequest,
  left: AbortSignal,
  principal: AgentPrincipal,
  options: Pick<McpHttpOptions, 'holdOf' | 'waits'>,
): StandBy {
  return async (wait) => {
    const hold = options.holdOf?.(req) ?? null;
    const stop = new AbortController();
    const standing = options.waits?.enter(principal.agentId, principal.user?.id, () =>
      stop.abort(),
    );
    if (standing && !standing.ok) return { ok: false };
    hold?.pause();
    try {
      const value = await wait(AbortSignal.any([stop.signal, left]));
      // The call goes on as work again: it queues for a slot like a new request.
      if (hold && (await hold.resume())) return { ok: false };
      return { ok: true, value };
    } finally {
      if (standing) standing.close();
    }
  };
}

interface StepUpParams {
  readonly name?: unknown;
  readonly uri?: unknown;
  readonly arguments?: unknown;
  readonly _meta?: Record<string, unknown>;
}

/** What a request asks the gate to resolve: a tool by name, or the entry a read or a get names. */
function stepUpTarget(
  message: unknown,
): { method: string; ref: unknown; params: StepUpParams | undefined } | null {
  const m = message as { method?: unknown; params?: StepUpParams } | null;
  if (typeof m !== 'object' || m === null || typeof m.method !== 'string') return null;
  const params = m.params;
  const ref =
    m.method === 'tools/call'
      ? params?.name
      : m.method === 'resources/read' && typeof params?.uri === 'string'
        ? { entry: 'resource' as const, uri: params.uri }
        : m.method === 'prompts/get' && typeof params?.name === 'string'
          ? { entry: 'prompt' as const, name: params.name }
          : undefined;
  return ref === undefined ? null : { method: m.method, ref, params };
}
