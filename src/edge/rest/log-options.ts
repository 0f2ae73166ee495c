/**
 * @module Structured logs (pino, through Fastify) that never carry a secret or a raw argument:
 * request lines hold method, path and peer only (no headers, no query string, no body), and
 * anything that could hold credentials or call arguments is censored should a log call ever
 * pass it. Must never be loosened to log bodies: call arguments travel in them.
 */
import type { FastifyServerOptions } from 'fastify';

const CENSORED = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["proxy-authorization"]',
  'req.body',
  'req.query',
  'body',
  'arguments',
  'args',
  'token',
  'api_key',
  '*.arguments',
  '*.args',
  '*.token',
  '*.api_key',
  // Database errors can quote the values of a failed statement.
  'err.detail',
  'err.parameters',
  'err.where',
];

interface RequestLike {
  method?: string;
  url?: string;
  ip?: string;
  id?: string;
}

export type LoggerOption = NonNullable<FastifyServerOptions['logger']>;

/**
 * Pino options for the REST front: the caller's options (level, stream…) with the censoring and
 * serializers that keep secrets and arguments out. `false`/undefined keeps logging off.
 */
export function safeLogger(option: LoggerOption | undefined): LoggerOption {
  if (!option) return false;
  const base = option === true ? {} : (option as Record<string, unknown>);
  return {
    level: 'info',
    ...base,
    redact: { paths: CENSORED, censor: '[redacted]' },
    serializers: {
      req: (req: RequestLike) => ({
        id: req.id ?? '',
        method: req.method ?? '',
        // The path only: a query string is the caller's text.
        url: (req.url ?? '').split('?')[0] ?? '',
        remoteAddress: req.ip ?? '',
      }),
    },
  };
}
