/** @module GET /metrics: Prometheus text exposition of this gateway's registry (admin token). */
import type { FastifyInstance } from 'fastify';
import type { AdminApi } from '../../../api/index.js';
import { described, documented, errors } from '../wire-schemas.js';

export function metricsRoutes(app: FastifyInstance, admin: AdminApi): void {
  app.get(
    '/metrics',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('getMetrics', ['observability']),
        summary: 'Prometheus metrics (text format); an admin or auditor credential',
        description:
          'Per tool calls, errors and latency, denials by rule, unregistered attempts, approvals, deprecated calls, sandbox outcomes, audit append latency, detector alerts and webhooks; HTTP and MCP requests by route, method and outcome, admission refusals by reason, process and Node metrics and the build info (docs/operations.md, Metrics). Scrape with `authorization: Bearer <admin or auditor token>` (Prometheus `authorization.credentials_file`).',
        response: described(200, 'The metrics in the Prometheus text format', 401),
      },
    },
    async (_req, reply) => {
      const { contentType, body } = await admin.metrics.render();
      return reply.type(contentType).send(body);
    },
  );
}
