/**
 * @module Admin routes for approvals, changes, second factors, grants and agent keys. Nothing here
 * is reachable with an agent key: an agent can neither approve its own calls nor widen its own
 * grants. Whoever decides is the request's authenticated operator; a body naming an approver is
 * refused (docs/architecture.md §6).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AdminApi } from '../../../api/index.js';
import { type PageQuery, pageQuery } from '../pagination.js';
import { actorOf, operatorOf } from '../request-actor.js';
import { described, documented, totpCode } from '../wire-schemas.js';
import { idParams, refuseStatedApprover, statedApprover } from './approval-body.js';
import { approvalDecisionRoutes } from './approval-decisions.js';

const OWN_FACTOR = {
  enrol:
    'An admin replacing their own existing second factor sends a current code of it: `{"totp": "123456"}` (without it: 403, audited; a wrong code counts toward the lockout). Another admin re-enrolling it needs none (a hand-over).',
  remove:
    'An admin removing their own second factor sends a current code of it: `{"totp": "123456"}` (without it: 403, audited; a wrong code counts toward the lockout). Another admin removing it needs none.',
} as const;

/** The own-factor routes' optional body: a current code of one's own factor. */
const ownFactorBody = {
  type: ['object', 'null'],
  properties: { totp: totpCode("A current code of the caller's own factor") },
} as const;

/**
 * A second-factor act's arguments: the operator, the account, and the current code an admin sends
 * to replace or remove their own factor (the body is optional: enrolling for someone else, or a
 * first factor, needs none; the domain checks it).
 */
function factorAct(req: FastifyRequest) {
  const body = req.body;
  const totp =
    typeof body === 'object' && body !== null && 'totp' in body ? { totp: body.totp } : {};
  return [operatorOf(req), (req.params as { id: string }).id, 'rest', totp] as const;
}

export function approvalRoutes(app: FastifyInstance, admin: AdminApi): void {
  app.get(
    '/v1/approvals',
    {
      config: { action: 'approvals.read' },
      schema: {
        ...documented('listApprovals', ['approvals']),
        summary: 'Approval requests, newest first, a page at a time',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            status: {
              type: 'string',
              enum: ['pending', 'approved', 'rejected', 'consumed', 'expired', 'withdrawn'],
            },
            ...pageQuery,
          },
        },
        response: described(200, 'A page of approval requests', 400, 401),
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
      config: { action: 'approvals.read' },
      schema: {
        ...documented('getApproval', ['approvals']),
        summary: 'One approval with the rendered call and every reason it waits',
        description:
          '`rendered` holds the resolved call as data: the raw arguments, `reasons` (every reason the gate recorded: action class, definition, conditions, after-injection with sources and flagged text, untrusted destinations with where each first appeared), `cost` and, where the tool declares one, `preview` (untrusted). `display` holds the same reasons, arguments, cost and preview as text a person reads, every invisible or bidi character a visible escape.',
        params: idParams,
        response: described(200, 'The approval, its rendered call and its display text', 401, 404),
      },
    },
    async (req) => admin.approvals.get((req.params as { id: string }).id),
  );

  approvalDecisionRoutes(app, admin);

  app.post(
    '/v1/approvals/:id/reject',
    {
      config: { action: 'approvals.decide' },
      schema: {
        ...documented('rejectApproval', ['approvals']),
        summary: 'Reject an approval request',
        params: idParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['reason'],
          properties: {
            approver: statedApprover,
            reason: { type: 'string', minLength: 1, maxLength: 2000 },
          },
        },
        response: described(200, 'The approval as decided', 400, 401, 403, 404, 409),
      },
    },
    async (req) => {
      refuseStatedApprover(req.body);
      const body = req.body as { reason: string };
      return admin.approvals.reject(
        (req.params as { id: string }).id,
        operatorOf(req),
        body.reason,
        'rest',
      );
    },
  );

  app.post(
    '/v1/agents/:id/keys',
    {
      config: { action: 'administer' },
      schema: {
        ...documented('issueAgentKey', ['agents']),
        summary: 'Issue an API key for an agent; the key is in this response only',
        params: idParams,
        response: described(201, 'The new key, shown once', 401, 404),
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
      config: { action: 'approvals.read' },
      schema: {
        ...documented('listChanges', ['approvals']),
        summary: 'Privileged grants and irreversible tools waiting for approvers',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            status: { type: 'string', enum: ['pending', 'applied', 'rejected', 'withdrawn'] },
            ...pageQuery,
          },
        },
        response: described(200, 'A page of pending changes', 400, 401),
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
      config: { action: 'approvals.decide' },
      schema: {
        ...documented('approveChange', ['approvals']),
        summary:
          "The authenticated approver's approval with their TOTP; the change applies when enough distinct approvers (none the requester; a change the bootstrap token requested counts the genesis admin as its requester) agree",
        params: idParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['totp'],
          properties: {
            approver: statedApprover,
            totp: totpCode(),
          },
        },
        response: described(200, 'The change and its approvals', 400, 401, 403, 404, 409, 429),
      },
    },
    async (req) => {
      refuseStatedApprover(req.body);
      const body = req.body as { totp: string };
      return admin.changes.approve(
        (req.params as { id: string }).id,
        operatorOf(req),
        body.totp,
        'rest',
      );
    },
  );

  app.post(
    '/v1/changes/:id/reject',
    {
      config: { action: 'approvals.decide' },
      schema: {
        ...documented('rejectChange', ['approvals']),
        summary: 'Reject a pending change',
        params: idParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['reason'],
          properties: {
            approver: statedApprover,
            reason: { type: 'string', minLength: 1, maxLength: 2000 },
          },
        },
        response: described(200, 'The change as rejected', 400, 401, 403, 404, 409),
      },
    },
    async (req) => {
      refuseStatedApprover(req.body);
      return admin.changes.reject(
        (req.params as { id: string }).id,
        operatorOf(req),
        (req.body as { reason: string }).reason,
        'rest',
      );
    },
  );

  app.post(
    '/v1/operators/:id/second-factor',
    {
      schema: {
        ...documented('enrolSecondFactor', ['operators']),
        summary:
          "Enrol (or replace) an operator's TOTP second factor (admins only); the secret is in this response only",
        description: OWN_FACTOR.enrol,
        params: idParams,
        body: ownFactorBody,
        response: described(201, 'The secret and its otpauth URI, once', 400, 401, 403, 404, 429),
      },
    },
    async (req, reply) => {
      const enrolment = await admin.secondFactor.enroll(...factorAct(req));
      return reply.status(201).header('cache-control', 'no-store').send(enrolment);
    },
  );

  app.delete(
    '/v1/operators/:id/second-factor',
    {
      schema: {
        ...documented('removeSecondFactor', ['operators']),
        summary: "Remove an operator's second factor (admins only)",
        description: OWN_FACTOR.remove,
        params: idParams,
        body: ownFactorBody,
        response: described(200, 'The second factor is removed', 400, 401, 403, 429),
      },
    },
    async (req) => admin.secondFactor.remove(...factorAct(req)),
  );

  app.get(
    '/v1/operators/:id/second-factor',
    {
      schema: {
        ...documented('getSecondFactor', ['operators']),
        summary: 'Whether an operator has a second factor, and its failed codes, backoff, lockout',
        params: idParams,
        response: described(200, "The second factor's state", 401),
      },
    },
    async (req) => {
      const id = (req.params as { id: string }).id;
      return {
        enrolled: await admin.secondFactor.enrolled(id),
        ...(await admin.secondFactor.state(id)),
      };
    },
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
      config: { action: 'administer' },
      schema: {
        ...documented('grantCapabilities', ['agents']),
        summary: 'Grant capabilities to an agent (admin only)',
        body: grantBody,
        response: described(200, 'The outcome of applying the grant', 400, 401, 404, 422),
      },
    },
    async (req) => {
      const body = req.body as { agent: string; capabilities: string[] };
      return admin.config.apply([{ kind: 'Grant', spec: body }], actorOf(req), { set: null });
    },
  );

  app.delete(
    '/v1/grants',
    {
      config: { action: 'administer' },
      schema: {
        ...documented('revokeCapabilities', ['agents']),
        summary: 'Revoke capabilities of an agent (admin only)',
        body: grantBody,
        response: described(200, 'The capabilities revoked', 400, 401, 404),
      },
    },
    async (req) => {
      const body = req.body as { agent: string; capabilities: string[] };
      return { revoked: await admin.agents.revoke(body.agent, body.capabilities, actorOf(req)) };
    },
  );
}
