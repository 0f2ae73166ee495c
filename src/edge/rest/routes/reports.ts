/** @module Governance reports over REST (admin token): GET /v1/reports and /v1/reports/{name}. */
import type { FastifyInstance } from 'fastify';
import type { AdminApi } from '../../../api/index.js';
import { described, documented, errors } from '../wire-schemas.js';

export function reportRoutes(app: FastifyInstance, admin: AdminApi): void {
  app.get(
    '/v1/reports',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('listReports', ['reports']),
        summary: 'The reports there are',
        response: described(200, 'The names of the reports', 401),
      },
    },
    async () => ({ reports: admin.reports.names() }),
  );
  app.get(
    '/v1/reports/:name',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('getReport', ['reports']),
        summary: 'One governance report as JSON, CSV or Markdown',
        description:
          'Reports: capability-register, access-matrix, invocations, deprecation-impact, orphaned-tools, portfolio-audit, security-review-record. `from`/`to` (ISO-8601; default the last 30 days, 90 for portfolio-audit) bound the reports over the audit log. CSV is RFC 4180 with text cells starting with = + - @ prefixed by an apostrophe.',
        params: {
          type: 'object',
          required: ['name'],
          properties: { name: { type: 'string', maxLength: 64 } },
        },
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            format: { type: 'string', enum: ['json', 'csv', 'md'], default: 'json' },
            from: { type: 'string', maxLength: 40 },
            to: { type: 'string', maxLength: 40 },
          },
        },
        response: described(200, 'The report in the requested format', 400, 401, 404),
      },
    },
    async (req, reply) => {
      const { name } = req.params as { name: string };
      const q = req.query as { format: string; from?: string; to?: string };
      const { contentType, body } = await admin.reports.render({
        name,
        format: q.format,
        ...(q.from !== undefined ? { from: q.from } : {}),
        ...(q.to !== undefined ? { to: q.to } : {}),
      });
      return reply.type(contentType).send(body);
    },
  );
}
