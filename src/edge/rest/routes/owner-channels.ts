/**
 * @module Owner teams' notification channels over REST (docs/architecture.md §8, C16):
 * `GET /v1/owner-channels`, `POST /v1/owner-channels`, `DELETE /v1/owner-channels/{id}`. Admins
 * manage every team's; an operator who is only an `owner` manages their own teams' and sees no
 * other. A channel's URL goes in and never comes out (only its origin).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AdminApi, OperatorAuthority } from '../../../api/index.js';
import { OWNER_PATTERN } from '../../../core/index.js';
import { actorOf, operatorOf } from '../request-actor.js';
import { ownerOnly } from '../route-roles.js';
import { documented, errors, noContent } from '../wire-schemas.js';

const tags = ['owner-channels'];

const channel = {
  type: 'object',
  description: 'A channel as operators see it: the URL’s origin only.',
  properties: {
    id: { type: 'string' },
    team: { type: 'string' },
    name: {
      type: ['string', 'null'],
      description: 'The name an applied file (kind OwnerChannel) gives it; null for one added here',
    },
    kind: { type: 'string', enum: ['webhook'] },
    url_hint: { type: 'string' },
    created_at: { type: 'string' },
    created_by: { type: 'string' },
  },
} as const;

/** Every team for an admin or auditor; an owner-only caller's own teams. */
function scopeOf(req: FastifyRequest, authority: OperatorAuthority): readonly string[] | null {
  const op = operatorOf(req);
  return ownerOnly(req, op, authority) ? op.teams : null;
}

export function ownerChannelRoutes(app: FastifyInstance, admin: AdminApi): void {
  app.get(
    '/v1/owner-channels',
    {
      config: { action: 'tools.read' },
      schema: {
        ...documented('listOwnerChannels', tags),
        summary: 'Owner teams’ notification channels (URL origins only)',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { team: { type: 'string', pattern: OWNER_PATTERN } },
        },
        response: {
          200: { type: 'object', properties: { channels: { type: 'array', items: channel } } },
          ...errors(400, 401, 403),
        },
      },
    },
    async (req) => {
      const { team } = req.query as { team?: string };
      return {
        channels: await admin.ownerChannels.list(
          team !== undefined ? { team } : {},
          scopeOf(req, admin.operators.authority),
        ),
      };
    },
  );

  app.post(
    '/v1/owner-channels',
    {
      config: { action: 'tools.manage' },
      schema: {
        ...documented('addOwnerChannel', tags),
        summary: 'Add a webhook channel (Slack-compatible payload) for an owner team',
        description:
          'The URL is loopback or https without credentials; at most 10 channels per team. It is stored sealed and never shown again (only its origin). Notices: deprecated, retiring, quarantined, orphaned, unhealthy, error_rate.',
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['team', 'url'],
          properties: {
            team: { type: 'string', maxLength: 100 },
            kind: { type: 'string', maxLength: 20 },
            url: { type: 'string', maxLength: 2000, writeOnly: true },
          },
        },
        response: { 201: channel, ...errors(400, 401, 403) },
      },
    },
    async (req, reply) => {
      const body = req.body as { team: string; kind?: string; url: string };
      const created = await admin.ownerChannels.add(
        { team: body.team, url: body.url, ...(body.kind !== undefined ? { kind: body.kind } : {}) },
        actorOf(req),
        scopeOf(req, admin.operators.authority),
      );
      return reply.status(201).send(created);
    },
  );

  app.delete(
    '/v1/owner-channels/:id',
    {
      config: { action: 'tools.manage' },
      schema: {
        ...documented('removeOwnerChannel', tags),
        summary: 'Remove an owner team’s channel',
        params: {
          type: 'object',
          required: ['id'],
          properties: { id: { type: 'string', maxLength: 64 } },
        },
        response: noContent('The channel is removed', 401, 403, 404),
      },
    },
    async (req, reply) => {
      const { id } = req.params as { id: string };
      await admin.ownerChannels.remove(id, actorOf(req), scopeOf(req, admin.operators.authority));
      return reply.status(204).send();
    },
  );
}
