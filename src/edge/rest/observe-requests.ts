/**
 * @module The HTTP port's request metrics (C16): every request is timed from its first hook to
 * the close of its response — also when admission refused it, when it matched no route, and when
 * the MCP SDK's transport wrote the answer itself (a hijacked reply runs no onSend or onResponse
 * hook; the response's `close` always comes). Labels are the route pattern the router matched,
 * never the URL, and the JSON-RPC method the MCP front noted; the metrics bound both. A refusal by
 * a cap (429/503 with Retry-After) is counted by the cap its own body names, so every place that
 * refuses — admission, principal shares, sessions, standing streams and waits — is counted
 * without calling in here.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AdminApi } from '../../api/index.js';
import { rpcMethodOf } from '../mcp/index.js';

type Requests = AdminApi['metrics']['requests'];

/** Registers the hooks; call before any other onRequest hook, so refusals are timed too. */
export function observeRequests(app: FastifyInstance, metrics: Requests): void {
  app.addHook('onRequest', async (req, reply) => {
    const start = performance.now();
    reply.raw.once('close', () => {
      const seconds = (performance.now() - start) / 1000;
      // Not finished: the client left first (or a stream was cut), whatever status was set.
      const status = reply.raw.writableFinished ? reply.raw.statusCode : 0;
      const route = req.routeOptions.url ?? null;
      metrics.http(route, req.method, status, seconds);
      if (route === '/mcp' && req.method === 'POST') metrics.mcp(rpcMethodOf(req), status, seconds);
    });
  });
  app.addHook('onSend', async (_req, reply, payload) => {
    const limit = refusedBy(reply, payload);
    if (limit !== null) metrics.refused(limit);
    return payload;
  });
}

/**
 * The cap a refusal names in its body (`details.limit`, or `error.data.details.limit` in a
 * JSON-RPC error); null for any other answer. Only 429 and 503 answers with Retry-After are read.
 */
function refusedBy(reply: FastifyReply, payload: unknown): string | null {
  const status = reply.statusCode;
  if ((status !== 429 && status !== 503) || !reply.hasHeader('retry-after')) return null;
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
