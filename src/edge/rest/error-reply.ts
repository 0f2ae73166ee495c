/**
 * @module An error answer as RFC 9457 problem details, for a request that asks for them
 * (`Accept: application/problem+json`, src/core/problem-details.ts). Every place the REST front
 * answers an error (the error handler, the not-found handler, admission control, a denied call)
 * asks here first; the default `{ code, message, details }` is left exactly as it was. /mcp is
 * never answered this way: MCP clients read JSON-RPC errors (docs/mcp.md).
 */
import type { FastifyReply } from 'fastify';
import {
  type ErrorBody,
  PROBLEM_JSON,
  prefersProblemDetails,
  problemDetails,
} from '../../core/index.js';

/** The path of a request, without its query: /mcp and /mcp/ are the MCP front's. */
function pathOf(url: string): string {
  return url.split('?')[0] ?? '';
}

/**
 * Sends `body` as problem details when the request asks for them, and says whether it did; when
 * it did not, the caller sends its default body. Sent as text already serialized: the routes'
 * error schemas describe the default shape and would drop the problem's members.
 */
export function sentAsProblem(reply: FastifyReply, status: number, body: ErrorBody): boolean {
  const path = pathOf(reply.request.url);
  if (path === '/mcp' || path === '/mcp/') return false;
  if (!prefersProblemDetails(reply.request.headers.accept)) return false;
  void reply
    .status(status)
    .type(PROBLEM_JSON)
    .send(JSON.stringify(problemDetails(status, body, path)));
  return true;
}
