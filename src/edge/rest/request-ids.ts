/**
 * @module Request ids and the caller's trace context at the REST front (docs/operations.md,
 * "Tracing"): each request's id is its `X-Request-Id` when that is a short printable value, else
 * the trace id of its `traceparent`, else a fresh one; it is echoed in the response's
 * `X-Request-Id` and carried by every log line of the request, with the caller's trace id.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import {
  type FastifyInstance,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import { parseTraceparent, requestIdOf, type TraceOrigin } from '../../core/index.js';

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
}

/**
 * Fastify's options for request ids: ours, logged as `request_id`; a request's log lines carry
 * the caller's trace id (`trace_id`) from the first one on.
 */
export const REQUEST_ID_OPTIONS = {
  genReqId: (req: IncomingMessage) =>
    requestIdOf(header(req, 'x-request-id'), header(req, 'traceparent'), randomUUID),
  // The log line's label for the request id (Fastify 5's logController, not the deprecated option).
  logController: new LogController({ requestIdLogLabel: 'request_id' }),
  childLoggerFactory: ((logger, bindings, options, req) => {
    const parent = parseTraceparent(header(req, 'traceparent'));
    return logger.child(parent ? { ...bindings, trace_id: parent.traceId } : bindings, options);
  }) satisfies NonNullable<FastifyServerOptions['childLoggerFactory']>,
};

/** Echoes each request's id (`X-Request-Id`); registered first, so every refusal carries it. */
export function registerRequestIds(app: FastifyInstance): void {
  app.addHook('onRequest', async (req, reply) => {
    void reply.header('x-request-id', req.id);
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
