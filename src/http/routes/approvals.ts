/**
 * @module Admin routes for approvals, grants and agent keys. Nothing here is reachable with an
 * agent key: an agent can neither approve its own calls nor widen its own grants.
 */
import type { FastifyInstance } from 'fastify';
import type { AdminApi } from '../../api/index.js';
import type { Actor } from '../../core/index.js';
import { type PageQuery, pageQuery } from '../pagination.js';
import { actorOf } from '../request-actor.js';
import { APPROVAL_READERS, APPROVERS } from '../route-roles.js';
import { errors } from '../wire-schemas.js';

const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', pattern: '^[A-Za-z0-9_.:@+-]{1,100}$' } },
} as const;

export function approvalRoutes(app: FastifyInstance, admin: AdminApi): void {
  app.get(
    '/v1/approvals',
    {
      config: { roles: APPROVAL_READERS },
      schema: {
        tags: ['approvals'],
        summary: 'Approval requests, newest first, a page at a time',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            status: {
              type: 'string',
              enum: ['pending', 'approved', 'rejected', 'consumed', 'expired'],
            },
            ...pageQuery,
          },
        },
        response: errors(400, 401),
      },
    },
    async (req) => {
      const { status, ...page } = req.query as { status?: string } & PageQuery;
      const result = await admin.approvals.page(status, page);
      return { approvals: result.items, next_cursor: result.next_cursor };
    },
  );

  app.get(
    '/v1/approvals/:id',
    {
      config: { roles: APPROVAL_READERS },
      schema: {
        tags: ['approvals'],
        summary: 'One approval with the rendered call',
        params: idParams,
        response: errors(401, 404),
      },
    },
    async (req) => admin.approvals.get((req.params as { id: string }).id),
  );

  app.post(
    '/v1/approvals/:id/approve',
    {
      config: { roles: APPROVERS },
      schema: {
        tags: ['approvals'],
        summary:
          'Approve: the agent retrying exactly this call may run it once (TOTP when the tool needs a second factor)',
        params: idParams,
        body: {
          type: ['object', 'null'],
          additionalProperties: false,
          properties: {
            approver: {
              type: 'string',
              maxLength: 100,
              description: 'Who approves (their TOTP is checked)',
            },
            totp: { type: 'string', maxLength: 10 },
            reason: { type: 'string', maxLength: 2000 },
          },
        },
        response: errors(400, 401, 403, 404, 409),
      },
    },
    async (req) => {
      const body = (req.body ?? {}) as { approver?: string; totp?: string; reason?: string };
      const approver: Actor = body.approver ? { id: body.approver, via: 'rest' } : actorOf(req);
      return admin.approvals.approve((req.params as { id: string }).id, approver, {
        ...(body.totp !== undefined ? { totp: body.totp } : {}),
        ...(body.reason !== undefined ? { reason: body.reason } : {}),
      });
    },
  );

  app.post(
    '/v1/approvals/:id/reject',
    {
      config: { roles: APPROVERS },
      schema: {
        tags: ['approvals'],
        summary: 'Reject an approval request',
        params: idParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['reason'],
          properties: {
            approver: { type: 'string', maxLength: 100 },
            reason: { type: 'string', minLength: 1, maxLength: 2000 },
          },
        },
        response: errors(400, 401, 404, 409),
      },
    },
    async (req) => {
      const body = req.body as { approver?: string; reason: string };
      return admin.approvals.reject(
        (req.params as { id: string }).id,
        body.approver ? { id: body.approver, via: 'rest' } : actorOf(req),
        body.reason,
      );
    },
  );

  app.post(
    '/v1/agents/:id/keys',
    {
      config: { roles: ['admin'] },
      schema: {
        tags: ['agents'],
        summary: 'Issue an API key for an agent; the key is in this response only',
        params: idParams,
        response: errors(401, 404),
      },
    },
    async (req, reply) => {
      const issued = await admin.keys.issue((req.params as { id: string }).id, actorOf(req));
      return reply
        .status(201)
        .send({ agent_id: issued.agentId, key_id: issued.keyId, api_key: issued.apiKey });
    },
  );

  app.get(
    '/v1/changes',
    {
      config: { roles: APPROVAL_READERS },
      schema: {
        tags: ['approvals'],
        summary: 'Privileged grants and irreversible tools waiting for approvers',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            status: { type: 'string', enum: ['pending', 'applied', 'rejected'] },
            ...pageQuery,
          },
        },
        response: errors(400, 401),
      },
    },
    async (req) => {
      const { status, ...page } = req.query as { status?: string } & PageQuery;
      const result = await admin.changes.page(status, page);
      return { changes: result.items, next_cursor: result.next_cursor };
    },
  );

  app.post(
    '/v1/changes/:id/approve',
    {
      config: { roles: APPROVERS },
      schema: {
        tags: ['approvals'],
        summary:
          "One approver's approval with their TOTP; the change applies when enough distinct approvers agree",
        params: idParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['approver', 'totp'],
          properties: {
            approver: { type: 'string', maxLength: 100 },
            totp: { type: 'string', maxLength: 10 },
          },
        },
        response: errors(400, 401, 403, 404, 409),
      },
    },
    async (req) => {
      const body = req.body as { approver: string; totp: string };
      return admin.changes.approve((req.params as { id: string }).id, body.approver, body.totp);
    },
  );

  app.post(
    '/v1/changes/:id/reject',
    {
      config: { roles: APPROVERS },
      schema: {
        tags: ['approvals'],
        summary: 'Reject a pending change',
        params: idParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['reason'],
          properties: { reason: { type: 'string', minLength: 1, maxLength: 2000 } },
        },
        response: errors(400, 401, 404, 409),
      },
    },
    async (req) =>
      admin.changes.reject(
        (req.params as { id: string }).id,
        actorOf(req),
        (req.body as { reason: string }).reason,
      ),
  );

  const grantBody = {
    type: 'object',
    additionalProperties: false,
    required: ['agent', 'capabilities'],
    properties: {
      agent: { type: 'string', maxLength: 100 },
      capabilities: {
        type: 'array',
        minItems: 1,
        maxItems: 100,
        items: { type: 'string', maxLength: 100 },
      },
    },
  } as const;

  app.post(
    '/v1/grants',
    {
      config: { roles: ['admin'] },
      schema: {
        tags: ['agents'],
        summary: 'Grant capabilities to an agent (admin only)',
        body: grantBody,
        response: errors(400, 401, 404, 422),
      },
    },
    async (req) => {
      const body = req.body as { agent: string; capabilities: string[] };
      return admin.config.apply([{ kind: 'Grant', spec: body }], actorOf(req));
    },
  );

  app.delete(
    '/v1/grants',
    {
      config: { roles: ['admin'] },
      schema: {
        tags: ['agents'],
        summary: 'Revoke capabilities of an agent (admin only)',
        body: grantBody,
        response: errors(400, 401, 404),
      },
    },
    async (req) => {
      const body = req.body as { agent: string; capabilities: string[] };
      return { revoked: await admin.agents.revoke(body.agent, body.capabilities, actorOf(req)) };
    },
  );
}
