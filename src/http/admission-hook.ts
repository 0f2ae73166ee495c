/**
 * @module The onRequest hook that puts every HTTP request through admission control. The slot is
 * released when the response closes (finished, or the client went away), which also covers MCP
 * replies that Fastify hands to the SDK transport. A standing MCP event stream (GET /mcp of an
 * open session) holds no slot: it is bounded by the session caps, and would otherwise pin a slot
 * for the session's life.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Admission, callerKey } from './admission.js';

export function admissionHook(admission: Admission, exempt: (url: string) => boolean) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    if (exempt(req.url)) return undefined;
    const path = req.url.split('?')[0] ?? '';
    const mcp = path === '/mcp' || path === '/mcp/';
    if (mcp && req.method === 'GET' && req.headers['mcp-session-id'] !== undefined)
      return undefined;
    const verdict = await admission.enter(callerKey(req.headers.authorization, req.ip));
    if (verdict.ok) {
      reply.raw.once('close', verdict.release);
      // A client that left while queued already closed its response: 'close' will not come again.
      if (reply.raw.closed) verdict.release();
      return undefined;
    }
    const { error } = verdict;
    void reply
      .status(error.httpStatus)
      .header('retry-after', String(error.details.retryAfterSeconds))
      .type('application/json');
    // An MCP client reads JSON-RPC; everyone else reads the one error shape.
    return reply.send(
      mcp
        ? {
            jsonrpc: '2.0',
            error: { code: error.jsonRpcCode, message: error.message, data: error.toBody() },
            id: null,
          }
        : error.toBody(),
    );
  };
}
