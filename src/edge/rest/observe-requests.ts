/**
 * @module The HTTP port's request metrics (C16): every request is timed from its first hook to
 * the close of its response — also when admission refused it, when it matched no route, and when
 * the MCP SDK's transport wrote the answer itself (a hijacked reply runs no onSend or onResponse
 * hook; the response's `close` always comes). Labels are the route pattern the router matched,
 * never the URL, and the JSON-RPC method the MCP front noted; the metrics bound both. A refusal by
 * a cap (429/503 with Retry-After) is counted by the cap its own body names (CapDetails `limit`),
 * so every place that refuses — admission, principal shares, sessions, standing streams and
 * waits — is counted without calling in here; one the SDK's transport wrote itself (its body
 * unseen) is counted as `other`. A 429 whose body names no cap (the pending-approval cap, a
 * gate decision that is audited) is not an admission refusal.
 */
import type { FastifyInstance } from 'fastify';
import type { AdminApi } from '../../api/index.js';
import { rpcMethodOf } from '../mcp/index.js';

type Requests = AdminApi['metrics']['requests'];

/** Registers the hooks; call before any other onRequest hook, so refusals are timed too. */
export function observeRequests(app: FastifyInstance, metrics: Requests): void {
  /** What onSend read of a retry-later answer: the cap it names, or null when it names none. */
  const caps = new WeakMap<object, string | null>();
  // Callback hooks, not async ones: no promise per request for bookkeeping.
  app.addHook('onRequest', (req, reply, done) => {
    const start = performance.now();
    const res = reply.raw;
    res.once('close', () => {
      const seconds = (performance.now() - start) / 1000;
      // Not finished: the client left first (or a stream was cut), whatever status was set.
      const status = res.writableFinished ? res.statusCode : 0;
      const route = req.routeOptions.url ?? null;
      metrics.http(route, req.method, status, seconds);
      if (route === '/mcp' && req.method === 'POST') metrics.mcp(rpcMethodOf(req), status, seconds);
      const cap = caps.has(req.raw)
        ? caps.get(req.raw)
        : retryLater(status, res.getHeader('retry-after'))
          ? 'other'
          : null;
      if (cap) metrics.refused(cap);
    });
    done();
  });
  app.addHook('onSend', (req, reply, payload, done) => {
    if (retryLater(reply.statusCode, reply.getHeader('retry-after')))
      caps.set(req.raw, capOf(payload));
    done(null, payload);
  });
}

/** A 429 or 503 that says when to come back: what every cap answers. */
function retryLater(status: number, retryAfter: unknown): boolean {
  return (status === 429 || status === 503) && retryAfter !== undefined && retryAfter !== '';
}

/**
 * The cap a refusal names in its body (`details.limit`, or `error.data.details.limit` in a
 * JSON-RPC error); null when it names none.
 */
function capOf(payload: unknown): string | null {
  if (typeof payload !== 'string') return null;
  let body: unknown;
  try {
    body = JSON.parse(payload);
  } catch {
    return null;
  }
  const b = body as {
    details?: { limit?: unknown };
    error?: { data?: { details?: { limit?: unknown } } };
  } | null;
  const limit = b?.details?.limit ?? b?.error?.data?.details?.limit;
  return typeof limit === 'string' ? limit : null;
}
