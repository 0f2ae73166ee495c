/**
 * @module Request ids and the caller's trace context at the REST front (docs/operations.md,
 * "Tracing"): each request's id is its `X-Request-Id` when that is a short printable value, else
 * the trace id of its `traceparent`, else a fresh one; it is echoed in the response's
 * `X-Request-Id` and carried by every log line of the request, with the caller's trace id.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parseTraceparent, requestIdOf, type TraceOrigin } from '../../core/index.js';

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
}

/** Fastify's options for request ids: ours, logged as `request_id`. */
export const REQUEST_ID_OPTIONS = {
  genReqId: (req: IncomingMessage) =>
    requestIdOf(header(req, 'x-request-id'), header(req, 'traceparent'), randomUUID),
  requestIdLogLabel: 'request_id',
} as const;

/**
 * Echoes each request's id (`X-Request-Id`) and puts the caller's trace id on its log lines.
 * Registered first, so a refusal by any later hook carries both.
 */
export function registerRequestIds(app: FastifyInstance): void {
  app.addHook('onRequest', async (req, reply) => {
    void reply.header('x-request-id', req.id);
    const parent = parseTraceparent(req.headers.traceparent);
    if (parent) req.log = req.log.child({ trace_id: parent.traceId });
  });
}

/** Where a REST call came from, for the gate's trace (call-context.ts `trace`). */
export function restTraceOrigin(req: FastifyRequest): TraceOrigin {
  return {
    parent: parseTraceparent(req.headers.traceparent),
    front: 'rest',
    transport: 'tcp',
    requestId: req.id,
  };
}
