/**
 * @module RFC 9457 problem details: the error body a client gets when it asks for
 * `application/problem+json`. The same error as the default `{ code, message, details }`, in the
 * standard members (type, title, status, detail, instance), with `code` unchanged and every other
 * member the error carries (`details`) beside them as extension members. Pure: the REST front
 * decides when to send it (src/edge/rest/error-reply.ts).
 */
import { ERROR_CODES, type ErrorBody } from './errors.js';

export const PROBLEM_JSON = 'application/problem+json';

/**
 * Where a problem type is named: `https://toolgate.dev/errors/<CODE>`. An identifier, as the JSON
 * Schemas' `$id`s are; clients compare it, they never fetch it. Each code is described in
 * docs/errors.md.
 */
export const PROBLEM_TYPE_BASE = 'https://toolgate.dev/errors/';

export interface ProblemDetails {
  readonly type: string;
  /** The code's summary from the catalogue: the same for every occurrence of the code. */
  readonly title: string;
  readonly status: number;
  /** This occurrence in words: the default body's `message`. */
  readonly detail: string;
  /** The request path the error answers (without its query, which may carry values). */
  readonly instance: string;
  readonly code: ErrorBody['code'];
  readonly [extension: string]: unknown;
}

/** The problem details of an error body sent with `status`, for the request at `path`. */
export function problemDetails(status: number, body: ErrorBody, path: string): ProblemDetails {
  const { code, message, ...extensions } = body;
  return {
    ...extensions,
    type: `${PROBLEM_TYPE_BASE}${code}`,
    title: ERROR_CODES[code].summary,
    status,
    detail: message,
    instance: path,
    code,
  };
}

/** One media range of an Accept header: its type, lower-cased, and its weight (RFC 9110 §12.5.1). */
function mediaRanges(accept: string): { type: string; q: number }[] {
  return accept.split(',').map((range) => {
    const [type = '', ...params] = range.split(';').map((part) => part.trim());
    let q = 1;
    for (const param of params) {
      const [name, value] = param.split('=').map((part) => part.trim());
      if (name?.toLowerCase() !== 'q' || value === undefined) continue;
      // A weight is 0–1 with up to three decimals; anything else makes the range not count.
      q = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value) ? Number.parseFloat(value) : 0;
    }
    return { type: type.toLowerCase(), q };
  });
}

/**
 * Whether a request's Accept header asks for problem details: it names `application/problem+json`
 * with a weight above 0, and `application/json` not with a higher one. Wildcards (`*\/*`) ask for
 * nothing in particular: such a client gets the default `{ code, message, details }`.
 */
export function prefersProblemDetails(accept: string | undefined): boolean {
  if (accept === undefined || !accept.toLowerCase().includes(PROBLEM_JSON)) return false;
  const ranges = mediaRanges(accept);
  const weight = (type: string) =>
    Math.max(0, ...ranges.filter((r) => r.type === type).map((r) => r.q));
  const problem = weight(PROBLEM_JSON);
  return problem > 0 && problem >= weight('application/json');
}
