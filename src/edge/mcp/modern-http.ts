/**
 * @module The 2026-07-28 era of /mcp: stateless requests on the v2 SDK's entry
 * (`createMcpHandler` in strict modern mode: the legacy era stays on the session wiring), each
 * served by a reused server instance (server-pool.ts) for the principal mcp-http.ts authenticated. The SDK answers `server/discover` and
 * `subscriptions/listen`; a catalog or identity change is published, as
 * `notifications/tools/list_changed`, to the listen streams of the principals whose permitted set
 * moved (listen-streams.ts). Runs stand in for sessions (run-meta.ts).
 */
import { Readable } from 'node:stream';
import {
  createMcpHandler,
  type McpHttpHandler,
  type McpServerFactory,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AgentApi } from '../../api/index.js';
import {
  type AgentPrincipal,
  ERROR_CODES,
  type ErrorCode,
  type ToolgateError,
} from '../../core/index.js';
import type { StandBy } from './approval-hold.js';
import { paramHeadersOf } from './header-agreement.js';
import { type RevisionWatch, watchRevisions } from './list-changed.js';
import { ListenStreams } from './listen-streams.js';
import { createModernServer, type ModernCaller } from './modern-server.js';
import { DefaultRuns, RUN_META_KEY } from './run-meta.js';
import { ServerPool } from './server-pool.js';

export interface ModernHttpOptions {
  readonly version: string;
  readonly listTtlMs: number;
  readonly runTtlSeconds?: number;
  readonly onError: (err: unknown) => void;
  /** A refused `requestState` (a security signal: forged, replayed across principals). */
  readonly onRefusedState?: (err: ToolgateError) => Promise<void>;
  /** How long one round of a call that waits for approval is held (approval-hold.ts). */
  readonly approvalWaitMs?: number;
  /**
   * A held call's wait as a standing wait of the request's principal, ended when `left` aborts
   * (the request's connection closed before its answer: mcp-http.ts).
   */
  readonly standBy?: (req: FastifyRequest, left: AbortSignal, principal: AgentPrincipal) => StandBy;
}

/**
 * Refusals a handler answers as JSON-RPC errors that keep their catalogue HTTP status instead of
 * the SDK's 200: a refused run (404, 410), the gate's `headers` step refusing a tools/call
 * whose `Mcp-Param-*` headers disagree with its body (400, as the revision asks of HeaderMismatch),
 * and a run the agent's or user's session cap refused (429 with Retry-After, as the 2025 era).
 */
const KEEPS_STATUS: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'RUN_NOT_FOUND',
  'RUN_EXPIRED',
  'RUN_REVOKED',
  'MCP_HEADER_MISMATCH',
  'LIMIT_REACHED',
]);

export class ModernMcp {
  readonly #agent: AgentApi;
  readonly #handler: McpHttpHandler;
  readonly #runs: DefaultRuns;
  /** The caller of each request being served, keyed by the request the SDK hands handlers. */
  readonly #callers = new WeakMap<Request, ModernCaller>();
  /** The instance each request was given, taken back once the request is answered. */
  readonly #served = new WeakMap<Request, Server>();
  readonly #pool: ServerPool<Server>;
  readonly #listen: ListenStreams;
  #watch: Promise<RevisionWatch> | null = null;
  readonly #standBy: ModernHttpOptions['standBy'];

  constructor(agent: AgentApi, options: ModernHttpOptions) {
    this.#agent = agent;
    this.#standBy = options.standBy;
    this.#runs = new DefaultRuns(agent, {
      via: 'mcp-http',
      ...(options.runTtlSeconds !== undefined ? { ttlSeconds: options.runTtlSeconds } : {}),
    });
    const callerOf = (ctx: ServerContext): ModernCaller => {
      const caller = ctx.http?.req ? this.#callers.get(ctx.http.req) : undefined;
      // Only requests this front authenticated reach a handler.
      if (!caller) throw new Error('modern MCP request without a principal');
      return caller;
    };
    this.#pool = new ServerPool((pool) =>
      createModernServer(agent, callerOf, {
        version: options.version,
        listTtlMs: options.listTtlMs,
        onError: options.onError,
        ...(options.onRefusedState ? { onRefusedState: options.onRefusedState } : {}),
        ...(options.approvalWaitMs !== undefined ? { approvalWaitMs: options.approvalWaitMs } : {}),
        hold: (server) => pool.hold(server),
      }),
    );
    const factory: McpServerFactory = (ctx) => {
      if (!ctx.requestInfo || !this.#callers.has(ctx.requestInfo)) {
        throw new Error('modern MCP request without a principal');
      }
      const server = this.#pool.take();
      this.#served.set(ctx.requestInfo, server);
      return server;
    };
    const entry = { legacy: 'reject', onerror: (err: unknown) => options.onError(err) } as const;
    this.#handler = createMcpHandler(factory, entry);
    // Listen streams: one bus per principal, so a change reaches only those whose set moved.
    this.#listen = new ListenStreams(agent, this.#runs, (bus) =>
      createMcpHandler(factory, { ...entry, bus }),
    );
  }

  /**
   * The run a request without a handle is served in: the principal's default run (minted when it
   * has none, as serving the request would); undefined when it cannot be had.
   */
  async defaultRun(principal: AgentPrincipal): Promise<string | undefined> {
    return this.#runs
      .for(principal)
      .resolve(undefined)
      .then(
        (r) => r.handle,
        () => undefined,
      );
  }

  /** Serves one authenticated modern request on the raw response. */
  async serve(
    req: FastifyRequest,
    reply: FastifyReply,
    principal: AgentPrincipal,
    body: string,
    message: unknown,
  ): Promise<void> {
    // Publishes list changes to listen streams; nothing is read before the first request, and
    // that request waits for the baseline (a change right after a first listen is not missed).
    this.#watch ??= watchRevisions(
      this.#agent,
      () => this.#listen.moved(),
      // A failed read is retried at the next interval; a database outage is reported elsewhere.
      () => {},
    );
    await this.#watch;
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
    }
    const request = new Request(`http://127.0.0.1${req.url}`, { method: 'POST', headers, body });
    const method = (message as { method?: unknown } | null)?.method;
    // A held call ends its wait when its client leaves: it must not run for nobody.
    const left = new AbortController();
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) left.abort();
    });
    this.#callers.set(request, {
      principal,
      runs: this.#runs.for(principal),
      // The gate compares them with the tool version it resolves (step `headers`).
      ...(method === 'tools/call' ? { paramHeaders: paramHeadersOf(req.headers) } : {}),
      ...(typeof req.headers.traceparent === 'string'
        ? { traceparent: req.headers.traceparent }
        : {}),
      ...(this.#standBy ? { standBy: this.#standBy(req, left.signal, principal) } : {}),
    });
    const listens = method === 'subscriptions/listen';
    const res = listens
      ? await this.#listen.serve(principal, request, message)
      : await this.#handler.fetch(request, { parsedBody: message });
    // An instance whose exchange ended with the answer (or never began: a listen) is idle again;
    // a streamed answer's instance comes back when its stream closes.
    const server = this.#served.get(request);
    if (server) this.#pool.settle(server);
    reply.hijack();
    const raw = reply.raw;
    const out: Record<string, string> = {};
    res.headers.forEach((v, k) => {
      out[k] = v;
    });
    if (!res.body) {
      raw.writeHead(res.status, out).end();
      return;
    }
    if ((res.headers.get('content-type') ?? '').startsWith('application/json')) {
      const text = await res.text();
      const kept = statusOf(res.status, text);
      if (kept.retryAfter !== undefined) out['retry-after'] = String(kept.retryAfter);
      raw.writeHead(kept.status, out).end(text);
      return;
    }
    // A stream (progress before the result, or a subscriptions/listen stream).
    raw.writeHead(res.status, out);
    const stream = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream);
    raw.once('close', () => stream.destroy());
    stream.pipe(raw);
  }

  /** Ends every listen stream with the subscription's graceful close (the server is stopping). */
  async endStreams(): Promise<void> {
    await this.#listen.close();
  }

  async close(): Promise<void> {
    (await this.#watch)?.stop();
    await this.#listen.close();
    await this.#handler.close();
  }
}

/**
 * A refused run (404, 410) or a header mismatch (400) keeps its catalogue status instead of the
 * SDK's 200: the error's catalogue code (its `data`) and its JSON-RPC number must both say so. A
 * cap's refusal also says when to retry.
 */
function statusOf(status: number, text: string): { status: number; retryAfter?: number } {
  if (status !== 200 || !text.includes('"error"')) return { status };
  try {
    const error = (
      JSON.parse(text) as {
        error?: {
          code?: unknown;
          data?: { code?: unknown; details?: { retryAfterSeconds?: unknown } };
        };
      }
    ).error;
    const code = error?.data?.code;
    if (typeof code !== 'string' || !KEEPS_STATUS.has(code as ErrorCode)) return { status };
    const wire = ERROR_CODES[code as ErrorCode];
    if (error?.code !== wire.jsonRpc) return { status };
    const retry = error.data?.details?.retryAfterSeconds;
    return typeof retry === 'number' && Number.isInteger(retry) && retry > 0
      ? { status: wire.http, retryAfter: retry }
      : { status: wire.http };
  } catch {
    return { status };
  }
}
