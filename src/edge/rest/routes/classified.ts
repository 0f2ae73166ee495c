/**
 * @module Admin routes of the classified store (calls' raw arguments, kept apart from the chained
 * audit log): an audited read of one call's arguments and an audited search, for admins and
 * auditors; erasure and the retention sweep, for admins. A value to find or erase travels in a
 * request body, never in a URL (URLs reach access logs). docs/security-model.md, "Personal data
 * and the audit log".
 */
import type { FastifyInstance } from 'fastify';
import type { AdminApi } from '../../../api/index.js';
import { checkSelector } from '../../../records/audit/index.js';
import { actorOf } from '../request-actor.js';
import { documented, errors } from '../wire-schemas.js';

const tags = ['audit'];

const record = {
  type: 'object',
  properties: {
    call_id: { type: 'string' },
    at: { type: 'string' },
    agent_id: { type: ['string', 'null'] },
    user_id: { type: ['string', 'null'] },
    tool_id: { type: ['string', 'null'] },
    args: { description: 'The arguments as the agent sent them' },
    masked: {
      description: "The same arguments as the audit log's records show them (keyed hashes)",
    },
  },
} as const;

const selector = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  maxProperties: 1,
  properties: {
    value: {
      type: 'string',
      minLength: 4,
      maxLength: 1024,
      description:
        'Rows whose arguments carry this value anywhere (ASCII letters folded): an e-mail address, an IBAN',
    },
    user: { type: 'string', minLength: 1, maxLength: 512, description: "A user's calls" },
    call_id: { type: 'string', minLength: 1, maxLength: 200, description: 'One call' },
  },
} as const;

export function classifiedRoutes(app: FastifyInstance, admin: AdminApi): void {
  app.get(
    '/v1/audit/classified/calls/:callId',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('getClassifiedCall', tags),
        summary: "One call's raw arguments from the classified store (the read is audited)",
        description:
          'Admins and auditors. The read is recorded (event audit.classified_read, naming the operator and the call) before anything is shown. NOT_FOUND when none are kept: never kept, erased, or past the retention period.',
        params: {
          type: 'object',
          required: ['callId'],
          properties: { callId: { type: 'string', minLength: 1, maxLength: 200 } },
        },
        response: { 200: record, ...errors(401, 403, 404) },
      },
    },
    async (req) => {
      const { callId } = req.params as { callId: string };
      return admin.classified.read(callId, actorOf(req));
    },
  );

  app.post(
    '/v1/audit/classified/search',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('searchClassified', tags),
        summary: 'Find raw arguments by a value they carry, or by user (the search is audited)',
        description:
          "Admins and auditors. For a value, `token` is its keyed hash as the audit log's records show it. Recorded as event audit.classified_searched with the operator and the number of matches, never the value.",
        body: selector,
        response: {
          200: {
            type: 'object',
            properties: {
              token: { type: ['string', 'null'] },
              items: { type: 'array', items: record },
              omitted: { type: 'integer' },
            },
          },
          ...errors(400, 401, 403),
        },
      },
    },
    async (req) => admin.classified.search(checkSelector(req.body as object), actorOf(req)),
  );

  app.post(
    '/v1/audit/classified/erase',
    {
      schema: {
        ...documented('eraseClassified', tags),
        summary: 'Erase raw arguments: every row carrying a value, of a user, or of one call',
        description:
          'Admins. The audit log is not touched (its records hold keyed hashes only), so `toolgate audit verify` still passes. Recorded as event audit.classified_erased with the operator, the count and the call ids, never the value.',
        body: selector,
        response: {
          200: { type: 'object', properties: { erased: { type: 'integer' } } },
          ...errors(400, 401, 403),
        },
      },
    },
    async (req) => admin.classified.erase(checkSelector(req.body as object), actorOf(req)),
  );

  app.post(
    '/v1/audit/classified/sweep',
    {
      schema: {
        ...documented('sweepClassified', tags),
        summary: 'Remove raw arguments older than the retention period now',
        description: '`serve` also runs this on its housekeeping timer.',
        response: {
          200: {
            type: 'object',
            properties: { removed: { type: 'integer' }, retention_days: { type: 'integer' } },
          },
          ...errors(401, 403),
        },
      },
    },
    async () => ({
      removed: await admin.classified.sweep(),
      retention_days: admin.classified.retentionDays,
    }),
  );
}
