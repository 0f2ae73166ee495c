/** @module Admin routes beside the catalog: apply -f over REST, agents, the event record. */
import type { FastifyInstance } from 'fastify';
import type { AdminApi } from '../../../api/index.js';
import { decodeCursor, pageFromRows, pageOf } from '../../../core/index.js';
import { parseConfigText } from '../../../operations/config/index.js';
import { nextCursor, type PageQuery, pageQuery } from '../pagination.js';
import { actorOf, operatorOf } from '../request-actor.js';
import { documented, errors } from '../wire-schemas.js';

export function adminRoutes(app: FastifyInstance, admin: AdminApi): void {
  // POST /v1/apply reads a JSON body as text and parses it as the CLI does (parseConfigText: a
  // duplicate key is malformed), so JSON, YAML and `apply -f` agree on what a file says. The
  // parser is scoped to this route; every other route keeps Fastify's JSON parser.
  void app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) =>
      done(null, body),
    );
    applyRoute(scope, admin);
  });

  const agent = {
    type: 'object',
    properties: {
      id: { type: 'string' },
      display_name: { type: 'string' },
      description: { type: 'string' },
      owner: { type: 'string' },
      enabled: { type: 'boolean' },
      created_at: { type: 'string' },
      updated_at: { type: 'string' },
      capabilities: { type: 'array', items: { type: 'string' } },
    },
  } as const;

  app.get(
    '/v1/agents',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('listAgents', ['agents']),
        summary: 'List agents with their capability grants, by id',
        querystring: { type: 'object', additionalProperties: false, properties: pageQuery },
        response: {
          200: {
            type: 'object',
            properties: { agents: { type: 'array', items: agent }, ...nextCursor },
          },
          ...errors(401),
        },
      },
    },
    async (req) => {
      const page = pageOf('agents', await admin.agents.list(), (a) => [a.id], 'asc', {
        ...(req.query as PageQuery),
      });
      return { agents: page.items, next_cursor: page.next_cursor };
    },
  );

  app.get(
    '/v1/agents/:id',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('getAgent', ['agents']),
        summary: 'One agent with its grants',
        params: {
          type: 'object',
          required: ['id'],
          properties: { id: { type: 'string', pattern: '^[A-Za-z0-9_.:@+-]{1,100}$' } },
        },
        response: { 200: agent, ...errors(401, 404) },
      },
    },
    async (req) => admin.agents.get((req.params as { id: string }).id),
  );

  app.get(
    '/v1/events',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('listAdminEvents', ['events']),
        summary: 'The administrative event record (who changed what, when), oldest first',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            subject: { type: 'string', maxLength: 300 },
            after: { type: 'integer', minimum: 0 },
            cursor: pageQuery.cursor,
            limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
          },
        },
        response: {
          200: {
            type: 'object',
            properties: {
              events: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    seq: { type: 'integer' },
                    at: { type: 'string' },
                    actor: { type: 'string' },
                    via: { type: 'string' },
                    action: { type: 'string' },
                    subject: { type: 'string' },
                    details: { type: 'object', additionalProperties: true },
                  },
                },
              },
              ...nextCursor,
            },
          },
          ...errors(400, 401),
        },
      },
    },
    async (req) => {
      const q = req.query as { subject?: string; after?: number; cursor?: string; limit: number };
      // The cursor is the last seq shown: the event record only grows at its end.
      const after = q.cursor !== undefined ? Number(decodeCursor('events', q.cursor)[0]) : q.after;
      const rows = await admin.events.list({
        limit: q.limit + 1,
        ...(q.subject !== undefined ? { subject: q.subject } : {}),
        ...(after !== undefined ? { afterSeq: after } : {}),
      });
      const page = pageFromRows('events', rows, (r) => [Number(r.seq)], q.limit);
      return {
        events: page.items.map((r) => ({ ...r, details: JSON.parse(r.details) as unknown })),
        next_cursor: page.next_cursor,
      };
    },
  );
}

/** POST /v1/apply: configuration documents in one transaction (operations/config). */
function applyRoute(app: FastifyInstance, admin: AdminApi): void {
  app.post(
    '/v1/apply',
    {
      config: { action: 'administer' },
      schema: {
        ...documented('applyConfiguration', ['config']),
        summary:
          'Apply a configuration file (YAML or JSON; kinds Tool, Agent, User, Grant, Policy, Provider, DestinationSet, OwnerChannel, Operator) in one transaction',
        description:
          'Idempotent. With dry_run=true nothing is written and the response is the plan. What this set (`set`, default `default`) declared before and the documents no longer declare is listed as `drift` and kept, or with prune=true revoked, disabled, withdrawn through its lifecycle, removed or deleted (`prune`); what a rule or another set keeps (a destination set a live tool names, the caller’s own account, the last enabled admin, an object another set still declares) stays listed as `drift` with the reason, with or without prune, and `prunable: false`. One object declared by two documents refuses the file (`config.declared_twice`). An OwnerChannel’s `url_env` is refused here (a request never reads the server’s environment): send `url`, which is stored sealed and never returned. Any invalid document refuses the whole file (CONFIG_INVALID, every problem listed with its document index and JSON pointer).',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            dry_run: { type: 'boolean', default: false },
            prune: {
              type: 'boolean',
              default: false,
              description:
                'also revoke, disable, withdraw or delete what this set declared before and the documents no longer declare (admins only)',
            },
            set: {
              type: 'string',
              default: 'default',
              description: 'the named configuration set the documents declare',
            },
          },
        },
        consumes: ['application/json', 'application/yaml'],
        body: {
          description: 'YAML text (application/yaml), a JSON document or a JSON array of documents',
        },
        response: {
          200: {
            type: 'object',
            properties: {
              dryRun: { type: 'boolean' },
              changes: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    document: { type: 'integer' },
                    kind: { type: 'string' },
                    subject: { type: 'string' },
                    action: {
                      type: 'string',
                      enum: ['create', 'update', 'unchanged', 'prune', 'drift'],
                    },
                    summary: { type: 'string' },
                    quarantined: { type: 'boolean' },
                    prunable: {
                      type: 'boolean',
                      description:
                        'on drift: true when prune=true would remove it, false when a rule or another set keeps it whatever prune says',
                    },
                  },
                },
              },
            },
          },
          ...errors(400, 401, 413, 415, 422),
        },
      },
    },
    async (req) => {
      const { dry_run, prune, set } = req.query as {
        dry_run: boolean;
        prune: boolean;
        set: string;
      };
      const docs =
        typeof req.body === 'string'
          ? parseConfigText(req.body)
          : Array.isArray(req.body)
            ? req.body
            : [req.body];
      return admin.config.apply(docs, actorOf(req), {
        dryRun: dry_run,
        prune,
        set,
        operator: operatorOf(req),
      });
    },
  );
}
