/**
 * @module The JSON-RPC method of a message POSTed to /mcp, noted where the front parses it so
 * the request metrics (edge/rest/observe-requests.ts) label it without parsing the body again.
 * Raw: the metrics bound it to the known set. Keyed weakly by the request: nothing outlives it.
 */
import type { FastifyRequest } from 'fastify';

const methods = new WeakMap<object, string>();

/** Notes what `message` is: its method, `batch` for an array, `response` for no method. */
export function noteRpcMethod(req: FastifyRequest, message: unknown): void {
  if (Array.isArray(message)) methods.set(req.raw, 'batch');
  else if (typeof message === 'object' && message !== null) {
    const method = (message as { method?: unknown }).method;
    methods.set(req.raw, typeof method === 'string' ? method : 'response');
  }
}

/** The method noted for this request; undefined when its body was never parsed. */
export function rpcMethodOf(req: FastifyRequest): string | undefined {
  return methods.get(req.raw);
}
