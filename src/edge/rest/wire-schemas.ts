/** @module JSON Schemas of request and response bodies, shared by the routes and the OpenAPI document. */
import { TOTP_DIGITS } from '../../api/index.js';

export const errorBody = {
  $id: 'ErrorBody',
  type: 'object',
  required: ['code', 'message', 'details'],
  properties: {
    code: { type: 'string', description: 'Stable code from docs/errors.md' },
    message: { type: 'string' },
    details: { type: 'object', additionalProperties: true },
  },
} as const;

const errorRef = { $ref: 'ErrorBody#' } as const;

/** The standard error responses a route may give, for the OpenAPI document. */
export function errors(...statuses: number[]): Record<number, typeof errorRef> {
  return Object.fromEntries(statuses.map((s) => [s, errorRef]));
}

/**
 * How an operation is named in the OpenAPI document: its `operationId` (what generated clients call
 * it; written by hand, stable, never derived from the URL) and its tags.
 */
export function documented(operationId: string, tags: readonly string[]) {
  return { operationId, tags: [...tags] };
}

/**
 * A success answer documented by its status and meaning only, and the errors the route may give
 * (`errors`). The success carries no schema on purpose: a described shape would also become the
 * serializer and filter what is sent, so these routes answer exactly what their service returns
 * (as JSON.stringify writes it).
 */
export function described(
  status: 200 | 201 | 202 | 304,
  description: string,
  ...failures: number[]
) {
  return { [status]: { description }, ...errors(...failures) };
}

/** A 204 answer (no body), and the errors the route may give. */
export function noContent(description: string, ...failures: number[]) {
  return { 204: { type: 'null', description }, ...errors(...failures) };
}

const finding = {
  type: 'object',
  properties: {
    rule: { type: 'string' },
    category: { type: 'string' },
    field: { type: 'string' },
    message: { type: 'string' },
    excerpt: { type: 'string' },
  },
} as const;

const toolSummaryProperties = {
  id: { type: 'string' },
  version: { type: 'string' },
  name: { type: 'string' },
  description: { type: 'string' },
  owner: { type: 'string' },
  tags: { type: 'array', items: { type: 'string' } },
  action_class: { type: 'string' },
  access_tier: { type: 'string' },
  data_access: { type: 'string' },
  egress: { type: 'string' },
  provenance: { type: 'string' },
  lifecycle: { type: 'string', enum: ['draft', 'active', 'deprecated', 'retired'] },
  quarantined: { type: 'boolean' },
  findings: { type: 'array', items: finding },
  definition_hash: { type: 'string' },
  created_at: { type: 'string' },
  created_by: { type: 'string' },
  updated_at: { type: 'string' },
  deprecated_at: { type: ['string', 'null'] },
  retire_at: { type: ['string', 'null'] },
  retired_at: { type: ['string', 'null'] },
} as const;

export const toolSummary = {
  $id: 'ToolVersionSummary',
  type: 'object',
  properties: toolSummaryProperties,
} as const;

export const toolDetail = {
  $id: 'ToolVersionDetail',
  type: 'object',
  properties: {
    ...toolSummaryProperties,
    definition: {
      type: 'object',
      additionalProperties: true,
      description: 'The normalized definition; see /v1/schemas/tool.json',
    },
  },
} as const;

export const toolParams = {
  type: 'object',
  required: ['id', 'version'],
  properties: {
    // Identifier characters only: anything else (NUL, slashes, spaces) is refused before lookup.
    id: { type: 'string', pattern: '^[A-Za-z0-9_.:@+-]{1,200}$' },
    version: { type: 'string', pattern: '^[0-9A-Za-z.+-]{1,64}$' },
  },
} as const;

export const reasonBody = {
  type: 'object',
  additionalProperties: false,
  required: ['reason'],
  properties: { reason: { type: 'string', minLength: 1, maxLength: 2000 } },
} as const;

/**
 * A TOTP code in a body: exactly the code's digits (TOTP_DIGITS of them, ASCII 0–9), so a number, a
 * stray value or a code of another length is a schema error (INPUT_INVALID) rather than a missing
 * or wrong code (attack round 11, F9; round 12, N5).
 */
export const totpCode = (description?: string) =>
  ({
    type: 'string',
    minLength: TOTP_DIGITS,
    maxLength: TOTP_DIGITS,
    pattern: `^[0-9]{${TOTP_DIGITS}}$`,
    ...(description === undefined ? {} : { description }),
  }) as const;
