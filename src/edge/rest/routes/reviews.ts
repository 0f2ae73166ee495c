/**
 * @module Admin routes for security reviews (C1): the reviewers' queue and an approver's review of
 * one version's definition, with a TOTP code or a passkey's assertion over exactly that review and
 * verdict (its options from the route beside it; docs/architecture.md §6, "Passkeys bound to the
 * decision"). The reviewer is the request's authenticated operator, never a name in the body; the
 * bootstrap admin token is refused (it is nobody in particular).
 */
import type { FastifyInstance } from 'fastify';
import type { AdminApi } from '../../../api/index.js';
import {
  MAX_REVIEW_NOTES,
  REVIEW_STATUSES,
  type ReviewDecision,
} from '../../../domain/catalog/index.js';
import { nextCursor, type PageQuery, pageQuery } from '../pagination.js';
import { operatorOf } from '../request-actor.js';
import { documented, errors, toolParams, totpCode } from '../wire-schemas.js';

const tags = ['reviews'];

const review = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    tool_id: { type: 'string' },
    version: { type: 'string' },
    access_tier: { type: 'string' },
    provenance: { type: 'string' },
    owner: { type: 'string' },
    definition_hash: { type: 'string' },
    reasons: { type: 'array', items: { type: 'string' } },
    status: { type: 'string', enum: [...REVIEW_STATUSES] },
    registered_by: { type: 'string' },
    registered_at: { type: 'string' },
    reviewer: { type: ['string', 'null'] },
    reviewed_at: { type: ['string', 'null'] },
    notes: { type: ['string', 'null'] },
  },
} as const;

export function reviewRoutes(app: FastifyInstance, admin: AdminApi): void {
  app.get(
    '/v1/reviews',
    {
      config: { action: 'approvals.read' },
      schema: {
        ...documented('listSecurityReviews', tags),
        summary: 'Security reviews, newest registration first (status=pending: the queue)',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { status: { type: 'string', enum: [...REVIEW_STATUSES] }, ...pageQuery },
        },
        response: {
          200: {
            type: 'object',
            properties: { reviews: { type: 'array', items: review }, ...nextCursor },
          },
          ...errors(400, 401),
        },
      },
    },
    async (req) => {
      const { status, cursor, limit } = req.query as {
        status?: (typeof REVIEW_STATUSES)[number];
      } & PageQuery;
      const page = await admin.reviews.page(status, {
        limit,
        ...(cursor !== undefined ? { cursor } : {}),
      });
      return { reviews: page.items, next_cursor: page.next_cursor };
    },
  );

  app.post(
    '/v1/tools/:id/versions/:version/review',
    {
      // Approvers review. Admins reach the handler too, so a body is checked first and an admin
      // without the approver role (or the bootstrap token) hears why from the review rules.
      config: { action: 'reviews.record' },
      schema: {
        ...documented('reviewToolVersion', tags),
        summary: "Record an approver's security review of this version's definition",
        description:
          'definition_hash must be the stored definition hash (GET /v1/tools/:id/versions/:version). An approval activates a draft registered to go live, or opens its four-eyes change; a rejection keeps it a draft. The reviewer is the authenticated operator: it must hold the approver role, must not have registered the definition nor be in the team that owns it; the bootstrap admin token never reviews.',
        params: toolParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['definition_hash', 'decision', 'notes'],
          properties: {
            definition_hash: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' },
            decision: { type: 'string', enum: ['approved', 'rejected'] },
            notes: { type: 'string', minLength: 1, maxLength: MAX_REVIEW_NOTES },
            totp: totpCode(
              "the reviewer's own second factor; required to approve a restricted, privileged or third-party tool (unless a passkey signs the review)",
            ),
            passkey: passkeyAnswer,
          },
        },
        response: {
          200: {
            type: 'object',
            properties: {
              review,
              tool: { $ref: 'ToolVersionDetail#' },
              changeId: { type: 'string' },
            },
          },
          ...errors(400, 401, 403, 404, 409),
        },
      },
    },
    async (req) => {
      const { id, version } = req.params as { id: string; version: string };
      const { totp, passkey, ...body } = req.body as {
        definition_hash: string;
        decision: ReviewDecision;
        notes: string;
        totp?: string;
        passkey?: Record<string, unknown>;
      };
      return admin.catalog.review(id, version, operatorOf(req), body, {
        via: 'rest',
        ...(totp !== undefined ? { totp } : {}),
        ...(passkey !== undefined ? { passkey } : {}),
      });
    },
  );
  reviewPasskeyRoute(app, admin);
}

/** The WebAuthn options of one review's decision (the review route above takes the answer). */
function reviewPasskeyRoute(app: FastifyInstance, admin: AdminApi): void {
  app.post(
    '/v1/tools/:id/versions/:version/review/passkey-options',
    {
      config: { action: 'reviews.record' },
      schema: {
        ...documented('reviewPasskeyOptions', tags),
        summary: 'WebAuthn options for signing this review with your passkey',
        description:
          "The options of `navigator.credentials.get` for deciding the pending review of exactly this definition with this verdict: the challenge is the SHA-256 of the canonical commitment returned beside them (kind `review`, the review id, tool, version, definition hash, verdict, reviewer, expiry, a single-use nonce). Send the authenticator's answer as `passkey` with the same definition_hash and decision to the review route within five minutes; an answer made for another review, verdict or decision is refused (PASSKEY_REFUSED). The relying party is the configured one (`passkeys.rp_id`, `passkeys.origin`), or the request's Origin when it is http(s)://localhost.",
        params: toolParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['definition_hash', 'decision'],
          properties: {
            definition_hash: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' },
            decision: { type: 'string', enum: ['approved', 'rejected'] },
          },
        },
        response: {
          200: {
            type: 'object',
            additionalProperties: true,
            properties: {
              challenge: { type: 'string' },
              rpId: { type: 'string' },
              commitment: { type: 'object', additionalProperties: true },
            },
          },
          ...errors(400, 401, 403, 404, 409),
        },
      },
    },
    async (req) => {
      const { id, version } = req.params as { id: string; version: string };
      const stated = req.body as { definition_hash: string; decision: ReviewDecision };
      const origin = typeof req.headers.origin === 'string' ? req.headers.origin : undefined;
      return admin.catalog.reviewPasskeyOptions({
        toolId: id,
        version,
        operator: operatorOf(req),
        stated,
        requestOrigin: origin,
        via: 'rest',
      });
    },
  );
}

/** A `navigator.credentials.get` answer (WebAuthn JSON, base64url fields); its shape is checked. */
const passkeyAnswer = {
  type: 'object',
  description:
    "the reviewer's passkey answer over exactly this review and verdict (options: POST …/review/passkey-options); instead of totp",
  additionalProperties: true,
  required: ['id', 'type', 'response'],
  properties: {
    id: { type: 'string', maxLength: 1024 },
    type: { type: 'string', enum: ['public-key'] },
    response: { type: 'object', additionalProperties: true },
  },
} as const;
