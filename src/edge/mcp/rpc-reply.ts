/**
 * @module A transport-level fault of /mcp as a JSON-RPC error reply, for both eras (C15). The HTTP
 * status and the JSON-RPC code both come from the one catalogue (docs/architecture.md §7): this
 * front never picks a number itself.
 */
import type { FastifyReply } from 'fastify';
import { ERROR_CODES, type ErrorCode, type ToolgateError } from '../../core/index.js';

export function rpcError(
  reply: FastifyReply,
  code: ErrorCode,
  message: string,
  data?: ToolgateError,
  id: string | number | null = null,
) {
  if (data) void reply.header('retry-after', String(retryAfterOf(data) ?? ''));
  const wire = ERROR_CODES[code];
  return reply
    .status(wire.http)
    .header('content-type', 'application/json')
    .send({
      jsonrpc: '2.0',
      error: { code: wire.jsonRpc, message, ...(data ? { data: data.toBody() } : {}) },
      id,
    });
}

export function retryAfterOf(err: ToolgateError): number | undefined {
  const retry = (err.details as { retryAfterSeconds?: unknown } | null)?.retryAfterSeconds;
  return typeof retry === 'number' ? retry : undefined;
}
