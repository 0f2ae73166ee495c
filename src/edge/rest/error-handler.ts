/**
 * @module Maps every error to the one wire shape `{ code, message, details }` with the status from
 * the error catalogue (or its RFC 9457 problem details, when asked: error-reply.ts). Unknown errors
 * are logged and answered as INTERNAL, never echoed.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import {
  type ErrorBody,
  internalErrorBody,
  isToolgateError,
  type Problem,
} from '../../core/index.js';
import { sentAsProblem } from './error-reply.js';

interface FastifyValidationIssue {
  readonly instancePath?: string;
  readonly message?: string;
  readonly keyword?: string;
  readonly params?: Record<string, unknown>;
}

function validationProblems(err: FastifyError): Problem[] {
  const where = (err as { validationContext?: string }).validationContext ?? 'body';
  const base = where === 'querystring' ? '/query' : `/${where}`;
  const issues = (err.validation ?? []) as readonly FastifyValidationIssue[];
  return issues.map((v) => {
    const extra =
      v.keyword === 'required' && typeof v.params?.missingProperty === 'string'
        ? `/${v.params.missingProperty}`
        : v.keyword === 'additionalProperties' && typeof v.params?.additionalProperty === 'string'
          ? `/${v.params.additionalProperty}`
          : '';
    return {
      pointer: base + (v.instancePath ?? '') + extra,
      message:
        v.keyword === 'additionalProperties'
          ? 'is not an allowed property'
          : (v.message ?? 'is invalid'),
      rule: `schema.${v.keyword ?? 'invalid'}`,
    };
  });
}

export function toErrorResponse(
  err: unknown,
  bodyLimit: number,
  contentType = '',
): { status: number; body: ErrorBody } {
  if (isToolgateError(err)) return { status: err.httpStatus, body: err.toBody() };
  const fe = err as Partial<FastifyError> & { validation?: unknown };
  if (fe.validation) {
    return {
      status: 400,
      body: {
        code: 'INPUT_INVALID',
        message: 'the request does not match its schema',
        details: { problems: validationProblems(fe as FastifyError) },
      },
    };
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return {
        status: 413,
        body: {
          code: 'PAYLOAD_TOO_LARGE',
          message: `the body is over ${bodyLimit} bytes`,
          details: { limitBytes: bodyLimit },
        },
      };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return {
        status: 415,
        body: {
          code: 'UNSUPPORTED_MEDIA_TYPE',
          message: 'send application/json or application/yaml',
          details: { contentType, accepted: ['application/json', 'application/yaml'] },
        },
      };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return {
        status: 400,
        body: {
          code: 'INPUT_MALFORMED',
          message: 'the body is not valid JSON',
          details: { reason: fe.message ?? '' },
        },
      };
    default:
      break;
  }
  // Fastify's JSON parser reports syntax errors (and __proto__ keys) as 400 without a code.
  if (fe.statusCode === 400 && err instanceof SyntaxError) {
    return {
      status: 400,
      body: {
        code: 'INPUT_MALFORMED',
        message: 'the body is not valid JSON',
        details: { reason: err.message },
      },
    };
  }
  return { status: 500, body: internalErrorBody() };
}

export function makeErrorHandler(bodyLimit: number) {
  return (err: unknown, request: FastifyRequest, reply: FastifyReply): void => {
    const { status, body } = toErrorResponse(
      err,
      bodyLimit,
      String(request.headers['content-type'] ?? ''),
    );
    // A stopping gateway's refusal is expected (drain.ts), not a failure: no stack for it.
    if (status >= 500 && body.code !== 'SHUTTING_DOWN')
      request.log.error({ err }, 'request failed');
    else request.log.info({ code: body.code }, 'request refused');
    // A cap or overload says when to come back (RFC 9110 §10.2.3), in the header and the body.
    const retry = (body.details as { retryAfterSeconds?: unknown } | null)?.retryAfterSeconds;
    if (typeof retry === 'number') void reply.header('retry-after', String(retry));
    if (sentAsProblem(reply, status, body)) return;
    void reply.status(status).type('application/json').send(body);
  };
}
