/**
 * @module Admin routes for tool secrets (C11): set, rotate, delete and list. Values go
 * in (request bodies) and never come out: responses carry names, versions, dates and key ids.
 * The routes live in their own scope whose error handler never echoes body text, since a
 * malformed body may hold a secret.
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import type { AdminApi } from '../../../api/index.js';
import { pageOf, TOOL_ID_PATTERN } from '../../../core/index.js';
import {
  ENVIRONMENT_PATTERN,
  MAX_SECRET_BYTES,
  SECRET_NAME_PATTERN,
} from '../../../domain/credentials/index.js';
import { toErrorResponse } from '../error-handler.js';
import { nextCursor, type PageQuery, pageQuery } from '../pagination.js';
import { actorOf } from '../request-actor.js';
import { documented, errors } from '../wire-schemas.js';

const tags = ['secrets'];

const secretInfo = {
  type: 'object',
  description: 'A secret as admins see it: never its value.',
  properties: {
    tool_id: { type: 'string' },
    name: { type: 'string' },
    environment: { type: 'string' },
    version: { type: 'integer' },
    key_id: { type: 'string', description: 'Hash prefix of the master key that sealed it' },
    created_at: { type: 'string' },
    created_by: { type: 'string' },
    rotated_at: { type: ['string', 'null'] },
    rotated_by: { type: ['string', 'null'] },
  },
} as const;

const params = {
  type: 'object',
  required: ['tool', 'name'],
  properties: {
    tool: { type: 'string', pattern: TOOL_ID_PATTERN },
    name: { type: 'string', pattern: SECRET_NAME_PATTERN },
  },
} as const;

const environmentQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    environment: { type: 'string', pattern: ENVIRONMENT_PATTERN, default: 'default' },
  },
} as const;

const valueBody = {
  type: 'object',
  additionalProperties: false,
  required: ['value'],
  properties: {
    value: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_SECRET_BYTES,
      description: 'The secret (at least 8 characters); write-only, never returned',
      writeOnly: true,
    },
  },
} as const;

interface Target {
  params: { tool: string; name: string };
  query: { environment: string };
}

/** The secrets list's filters: a tool, an environment, and a page. */
const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    tool: { type: 'string', pattern: TOOL_ID_PATTERN },
    environment: { type: 'string', pattern: ENVIRONMENT_PATTERN },
    ...pageQuery,
  },
} as const;

export async function secretRoutes(
  app: FastifyInstance,
  admin: AdminApi,
  bodyLimit: number,
): Promise<void> {
  await app.register(async (scope) => {
    // Like the server's handler, but a malformed body's parser message (which quotes the body)
    // is never sent, and failures are logged by code only.
    scope.setErrorHandler((err: FastifyError, req, reply) => {
      const { status, body } = toErrorResponse(
        err,
        bodyLimit,
        String(req.headers['content-type'] ?? ''),
      );
      const safe =
        body.code === 'INPUT_MALFORMED'
          ? { ...body, details: { reason: 'the body is not valid JSON' } }
          : body;
      if (status >= 500)
        req.log.error({ code: body.code, errorName: err.name }, 'secret request failed');
      else req.log.info({ code: body.code }, 'request refused');
      void reply.status(status).type('application/json').send(safe);
    });

    scope.get(
      '/v1/secrets',
      {
        // The inventory (never a value) is read-only state: an auditor reads it as on the CLI.
        config: { action: 'state.read' },
        schema: {
          ...documented('listSecrets', tags),
          summary: 'List secrets (tool, name, environment, version, dates, key id; never values)',
          querystring: listQuery,
          response: {
            200: {
              type: 'object',
              properties: { secrets: { type: 'array', items: secretInfo }, ...nextCursor },
            },
            ...errors(400, 401),
          },
        },
      },
      async (req) => {
        const q = req.query as { tool?: string; environment?: string } & PageQuery;
        const list = await admin.secrets.list({
          ...(q.tool ? { toolId: q.tool } : {}),
          ...(q.environment ? { environment: q.environment } : {}),
        });
        const page = pageOf('secrets', list, (s) => [s.tool_id, s.name, s.environment], 'asc', {
          cursor: q.cursor,
          limit: q.limit,
        });
        return { secrets: page.items, next_cursor: page.next_cursor };
      },
    );

    scope.put(
      '/v1/secrets/:tool/:name',
      {
        schema: {
          ...documented('createSecret', tags),
          summary: "Create a tool's secret (version 1); only that tool can use it",
          description:
            'Refused with SECRET_EXISTS if it exists: rotate it instead. The value is sealed with AES-256-GCM under the master key and never returned.',
          params,
          querystring: environmentQuery,
          body: valueBody,
          response: {
            201: { type: 'object', properties: { secret: secretInfo } },
            ...errors(400, 401, 409, 500),
          },
        },
      },
      async (req, reply) => {
        const { params: p, query } = req as unknown as Target;
        const { value } = req.body as { value: string };
        const secret = await admin.secrets.set(
          { toolId: p.tool, name: p.name, environment: query.environment },
          value,
          actorOf(req),
        );
        return reply.status(201).send({ secret });
      },
    );

    scope.post(
      '/v1/secrets/:tool/:name/rotate',
      {
        schema: {
          ...documented('rotateSecret', tags),
          summary:
            'Rotate a secret: the new value becomes the next version, the old one is no longer used',
          params,
          querystring: environmentQuery,
          body: valueBody,
          response: {
            200: { type: 'object', properties: { secret: secretInfo } },
            ...errors(400, 401, 404, 500),
          },
        },
      },
      async (req) => {
        const { params: p, query } = req as unknown as Target;
        const { value } = req.body as { value: string };
        const secret = await admin.secrets.rotate(
          { toolId: p.tool, name: p.name, environment: query.environment },
          value,
          actorOf(req),
        );
        return { secret };
      },
    );

    scope.delete(
      '/v1/secrets/:tool/:name',
      {
        schema: {
          ...documented('deleteSecret', tags),
          summary: 'Delete a secret',
          params,
          querystring: environmentQuery,
          response: {
            200: { type: 'object', properties: { deleted: secretInfo } },
            ...errors(400, 401, 404),
          },
        },
      },
      async (req) => {
        const { params: p, query } = req as unknown as Target;
        const deleted = await admin.secrets.delete(
          { toolId: p.tool, name: p.name, environment: query.environment },
          actorOf(req),
        );
        return { deleted };
      },
    );
  });
}
