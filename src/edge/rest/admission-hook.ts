/**
 * @module The onRequest hook that puts every HTTP request through admission control, in one of
 * two lanes: agents' requests (agent routes, /mcp, the OAuth discovery documents) and everyone
 * else's (the console, admin routes, docs), so agents' load never starves the operators who are
 * there to stop it. The ticket is kept on the request (`req.admission`): the front claims it for
 * the principal once authenticated, and gives the slot back when the request turns into a
 * standing stream or wait. The slot is released when the response closes (finished, or the client
 * went away), which also covers MCP replies that Fastify hands to the SDK transport.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Admission, type Admitted, callerKey } from './admission.js';
import { sentAsProblem } from './error-reply.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** This request's admission ticket (null for probes, which are never admitted). */
    admission: Admitted | null;
  }
}

export interface AdmissionLanes {
  readonly agents: Admission;
  readonly operators: Admission;
}

export function admissionHook(
  lanes: AdmissionLanes,
  exempt: (url: string) => boolean,
  isAgentRequest: (req: FastifyRequest) => boolean,
) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    if (exempt(req.url)) return undefined;
    const path = req.url.split('?')[0] ?? '';
    const mcp = path === '/mcp' || path === '/mcp/';
    const lane = isAgentRequest(req) ? lanes.agents : lanes.operators;
    const verdict = await lane.enter(callerKey(req.headers.authorization, req.ip));
    if (verdict.ok) {
      req.admission = verdict;
      reply.raw.once('close', () => verdict.release());
      // A client that left while queued already closed its response: 'close' will not come again.
      if (reply.raw.closed) verdict.release();
      return undefined;
    }
    const { error } = verdict;
    void reply.header('retry-after', String(error.details.retryAfterSeconds));
    if (sentAsProblem(reply, error.httpStatus, error.toBody())) return reply;
    void reply.status(error.httpStatus).type('application/json');
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
