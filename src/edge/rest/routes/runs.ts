/**
 * @module Runs, operator side: the open runs (optionally of one agent) for admins and auditors,
 * and an admin's revoke of any run, recorded with the operator. The holder's own revoke is on the
 * agent side; both end in the one revoke path of the run service.
 */
import type { FastifyInstance } from 'fastify';
import type { AdminApi } from '../../../api/index.js';
import { type PageQuery, pageQuery } from '../pagination.js';
import { actorOf } from '../request-actor.js';
import { described, documented, errors, noContent } from '../wire-schemas.js';

const handleParams = {
  type: 'object',
  required: ['handle'],
  properties: { handle: { type: 'string', pattern: '^[A-Za-z0-9_.:@+-]{1,100}$' } },
} as const;

export function runRoutes(app: FastifyInstance, admin: AdminApi): void {
  app.get(
    '/v1/runs',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('listRuns', ['runs']),
        summary: 'Open runs, newest first, optionally of one agent (the live sessions view)',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            agent: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$' },
            ...pageQuery,
          },
        },
        response: described(200, 'A page of open runs', 400, 401, 403),
      },
    },
    async (req) => {
      const { agent, ...page } = req.query as { agent?: string } & PageQuery;
      const result = await admin.runs.open({
        ...page,
        ...(agent !== undefined ? { agentId: agent } : {}),
      });
      return { runs: result.items, next_cursor: result.next_cursor };
    },
  );

  app.post(
    '/v1/runs/:handle/revoke',
    {
      config: { action: 'administer' },
      schema: {
        ...documented('revokeRun', ['runs']),
        summary: "Revoke a run at once: its holder's next request is refused with RUN_REVOKED",
        params: handleParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['reason'],
          properties: { reason: { type: 'string', minLength: 1, maxLength: 500 } },
        },
        response: noContent('The run is revoked', 400, 401, 403, 404),
      },
    },
    async (req, reply) => {
      const { handle } = req.params as { handle: string };
      const { reason } = req.body as { reason: string };
      await admin.runs.revokeBy(handle, actorOf(req), reason);
      return reply.status(204).send();
    },
  );
}
