/**
 * @module Admin routes for live destination sets (docs/architecture.md §3 step `policy`): create, list,
 * show (with members), add and remove members, refresh a directory set now. Every change is an
 * event and an audit record, recorded with the authenticated operator.
 */
import type { FastifyInstance } from 'fastify';
import type { AdminApi } from '../../../api/index.js';
import {
  DESTINATION_KINDS,
  DESTINATION_SET_NAME_PATTERN,
  type DestinationSetSpec,
  destinationSetSpecSchema,
} from '../../../domain/policy/index.js';
import { actorOf } from '../request-actor.js';
import { documented, errors } from '../wire-schemas.js';

const tags = ['destination-sets'];

const directory = destinationSetSpecSchema.properties.directory;

const setView = {
  type: 'object',
  description: 'A destination set without its members (see GET /v1/destination-sets/{name}).',
  properties: {
    name: { type: 'string' },
    kind: { enum: [...DESTINATION_KINDS] },
    source: { enum: ['admin', 'directory'] },
    directory: { anyOf: [directory, { type: 'null' }] },
    description: { type: 'string' },
    created_at: { type: 'string' },
    created_by: { type: 'string' },
    updated_at: { type: 'string' },
    refreshed_at: { type: ['string', 'null'] },
    members: { type: 'integer', description: 'How many members it holds' },
  },
} as const;

const params = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string', pattern: DESTINATION_SET_NAME_PATTERN } },
} as const;

const valuesBody = {
  type: 'object',
  additionalProperties: false,
  required: ['values'],
  properties: {
    values: {
      type: 'array',
      minItems: 1,
      maxItems: 1000,
      items: { type: 'string', minLength: 1, maxLength: 512 },
      description: "Destinations of the set's kind; each is normalised (an e-mail lower-cased)",
    },
  },
} as const;

const strings = { type: 'array', items: { type: 'string' } } as const;

/** The destination sets list: every set, its kind and source (members by name). */
const listSchema = {
  ...documented('listDestinationSets', tags),
  summary: 'List destination sets',
  response: {
    200: { type: 'object', properties: { sets: { type: 'array', items: setView } } },
    ...errors(401, 403),
  },
} as const;

export function destinationSetRoutes(app: FastifyInstance, admin: AdminApi): void {
  app.get(
    '/v1/destination-sets',
    // Read-only state: an auditor reads it here as on the CLI (one table of actions).
    { config: { action: 'state.read' }, schema: listSchema },
    async () => ({ sets: await admin.destinationSets.list() }),
  );

  app.post(
    '/v1/destination-sets',
    {
      schema: {
        ...documented('createDestinationSet', tags),
        summary: 'Create a destination set (admin-managed, or supplied by a directory tool)',
        body: destinationSetSpecSchema,
        response: {
          201: { type: 'object', properties: { set: setView } },
          ...errors(400, 401, 403, 409),
        },
      },
    },
    async (req, reply) => {
      const set = await admin.destinationSets.create(req.body as DestinationSetSpec, actorOf(req));
      return reply.status(201).send({ set });
    },
  );

  app.get(
    '/v1/destination-sets/:name',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('getDestinationSet', tags),
        summary: 'Show a destination set and its members',
        params,
        response: {
          200: { type: 'object', properties: { set: setView, members: strings } },
          ...errors(400, 401, 403, 404),
        },
      },
    },
    async (req) => {
      const { name } = req.params as { name: string };
      const set = await admin.destinationSets.get(name);
      return { set, members: await admin.destinationSets.members(name) };
    },
  );

  app.post(
    '/v1/destination-sets/:name/members',
    {
      schema: {
        ...documented('addDestinationSetMembers', tags),
        summary: 'Add members to an admin-managed set',
        params,
        body: valuesBody,
        response: {
          200: { type: 'object', properties: { added: strings } },
          ...errors(400, 401, 403, 404),
        },
      },
    },
    async (req) => {
      const { name } = req.params as { name: string };
      const { values } = req.body as { values: string[] };
      return admin.destinationSets.add(name, values, actorOf(req));
    },
  );

  app.post(
    '/v1/destination-sets/:name/members/remove',
    {
      schema: {
        ...documented('removeDestinationSetMembers', tags),
        summary: 'Remove members from an admin-managed set',
        params,
        body: valuesBody,
        response: {
          200: { type: 'object', properties: { removed: strings } },
          ...errors(400, 401, 403, 404),
        },
      },
    },
    async (req) => {
      const { name } = req.params as { name: string };
      const { values } = req.body as { values: string[] };
      return admin.destinationSets.remove(name, values, actorOf(req));
    },
  );

  app.post(
    '/v1/destination-sets/:name/refresh',
    {
      schema: {
        ...documented('refreshDestinationSet', tags),
        summary: "Ask a directory set's tool now and store its answer",
        params,
        response: {
          200: { type: 'object', properties: { added: strings, removed: strings } },
          ...errors(400, 401, 403, 404, 502),
        },
      },
    },
    async (req) => {
      const { name } = req.params as { name: string };
      return admin.destinationSets.refresh(name, actorOf(req));
    },
  );
}
