/** @module Admin routes for the catalog: register, list, show, lifecycle, quarantine and release. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AdminApi } from '../../../api/index.js';
import { pageOf, problem, ToolgateError } from '../../../core/index.js';
import { parseConfigText } from '../../../operations/config/index.js';
import { nextCursor, type PageQuery, pageQuery } from '../pagination.js';
import { actorOf, operatorOf } from '../request-actor.js';
import { ownerOnly, requireOwnTeam } from '../route-roles.js';
import { documented, errors, reasonBody, toolParams } from '../wire-schemas.js';

const tags = ['tools'];
const QUARANTINE_IDS = { quarantine: 'quarantineToolVersion', release: 'releaseToolVersion' };
const detailRef = { $ref: 'ToolVersionDetail#' } as const;

/** A single definition arrives as a JSON object or as YAML text holding one document. */
function oneDefinition(body: unknown): unknown {
  if (typeof body !== 'string') return body;
  const docs = parseConfigText(body);
  if (docs.length !== 1) {
    throw new ToolgateError('INPUT_INVALID', 'send exactly one tool definition', {
      problems: [
        problem('', `found ${docs.length} documents; use POST /v1/apply for several`, 'single'),
      ],
    });
  }
  return docs[0];
}

/**
 * An owner registers only for their own teams, and never a new version of a tool id another
 * team holds (that would take the id over).
 */
async function checkDefinitionOwner(
  req: FastifyRequest,
  admin: AdminApi,
  definition: unknown,
): Promise<void> {
  const op = operatorOf(req);
  if (!ownerOnly(req, op, admin.operators.authority)) return;
  const { id, owner } = (definition ?? {}) as { id?: unknown; owner?: unknown };
  await requireOwnTeam(
    req,
    op,
    admin.operators.authority,
    typeof owner === 'string' ? owner : '(none)',
  );
  if (typeof id !== 'string') return;
  const existing = await admin.catalog.versions(id).catch((err: unknown) => {
    if (err instanceof ToolgateError && err.code === 'TOOL_NOT_FOUND') return [];
    throw err;
  });
  // The id is taken, which a refusal cannot hide; which team holds it is not said.
  if (existing.some((v) => !op.teams.includes(v.owner))) {
    throw new ToolgateError(
      'FORBIDDEN',
      `the tool id ${id} is held by a team that is not one of operator ${op.id}'s; choose another id`,
      { roles: ['admin'] },
    );
  }
}

export function toolRoutes(app: FastifyInstance, admin: AdminApi): void {
  app.get(
    '/v1/tools',
    {
      config: { action: 'tools.read' },
      schema: {
        ...documented('listToolVersions', tags),
        summary: 'List every registered tool version (quarantined and retired included)',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            lifecycle: { type: 'string', enum: ['draft', 'active', 'deprecated', 'retired'] },
            owner: { type: 'string', maxLength: 100 },
            quarantined: { type: 'boolean' },
            ...pageQuery,
          },
        },
        response: {
          200: {
            type: 'object',
            properties: {
              tools: { type: 'array', items: { $ref: 'ToolVersionSummary#' } },
              ...nextCursor,
            },
          },
          ...errors(400, 401),
        },
      },
    },
    async (req) => {
      const q = req.query as {
        lifecycle?: 'draft' | 'active' | 'deprecated' | 'retired';
        owner?: string;
        quarantined?: boolean;
      } & PageQuery;
      const { cursor, limit, ...filter } = q;
      const op = operatorOf(req);
      const all = await admin.catalog.list(filter);
      const teams = admin.operators.authority.teamScope(op, 'tools.read'); // null: every team
      const shown = teams === null ? all : all.filter((t) => teams.includes(t.owner));
      const page = pageOf('tools', shown, (t) => [t.id, t.version], 'asc', {
        cursor,
        limit,
      });
      return { tools: page.items, next_cursor: page.next_cursor };
    },
  );

  app.post(
    '/v1/tools',
    {
      config: { action: 'tools.manage' },
      schema: {
        ...documented('registerToolVersion', tags),
        summary:
          'Register one tool version (JSON or YAML); refused whole with every problem listed',
        description:
          'The body is a tool definition as described by /v1/schemas/tool.json. A flagged description is stored quarantined and never offered.',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { draft: { type: 'boolean', default: false } },
        },
        consumes: ['application/json', 'application/yaml'],
        body: { description: 'A tool definition (see /v1/schemas/tool.json)' },
        response: {
          200: { type: 'object', properties: { outcome: { const: 'unchanged' }, tool: detailRef } },
          201: {
            type: 'object',
            properties: {
              outcome: { const: 'created' },
              tool: detailRef,
              changeId: { type: 'string' },
              review: {
                type: 'object',
                description: 'Set when the definition waits for a security review',
                properties: {
                  id: { type: 'string' },
                  reasons: { type: 'array', items: { type: 'string' } },
                },
              },
            },
          },
          ...errors(400, 401, 403, 409, 413, 415, 422),
        },
      },
    },
    async (req, reply) => {
      const { draft } = req.query as { draft: boolean };
      const definition = oneDefinition(req.body);
      await checkDefinitionOwner(req, admin, definition);
      const result = await admin.catalog.register(definition, actorOf(req), {
        initialState: draft ? 'draft' : 'active',
        operator: operatorOf(req),
      });
      return reply.status(result.outcome === 'created' ? 201 : 200).send(result);
    },
  );

  app.get(
    '/v1/tools/:id',
    {
      config: { action: 'tools.read', ownedTool: 'tool' },
      schema: {
        ...documented('listVersionsOfTool', tags),
        summary: 'All versions of one tool, oldest first',
        params: {
          type: 'object',
          required: ['id'],
          properties: { id: { type: 'string', pattern: '^[A-Za-z0-9_.:@+-]{1,200}$' } },
        },
        response: {
          200: {
            type: 'object',
            properties: { id: { type: 'string' }, versions: { type: 'array', items: detailRef } },
          },
          ...errors(401, 404),
        },
      },
    },
    async (req) => {
      const { id } = req.params as { id: string };
      return { id, versions: await admin.catalog.versions(id) };
    },
  );

  app.get(
    '/v1/tools/:id/versions/:version',
    {
      config: { action: 'tools.read', ownedTool: 'version' },
      schema: {
        ...documented('getToolVersion', tags),
        summary: 'One tool version',
        params: toolParams,
        response: { 200: detailRef, ...errors(401, 404) },
      },
    },
    async (req) => {
      const { id, version } = req.params as { id: string; version: string };
      return admin.catalog.get(id, version);
    },
  );

  app.post(
    '/v1/tools/:id/versions/:version/activate',
    {
      config: { action: 'tools.manage', ownedTool: 'version' },
      schema: {
        ...documented('activateToolVersion', tags),
        summary: 'Activate a draft (or undo a deprecation)',
        params: toolParams,
        response: { 200: detailRef, ...errors(401, 404, 409) },
      },
    },
    async (req) => {
      const { id, version } = req.params as { id: string; version: string };
      return admin.catalog.activate(id, version, actorOf(req));
    },
  );

  app.post(
    '/v1/tools/:id/versions/:version/deprecate',
    {
      config: { action: 'tools.manage', ownedTool: 'version' },
      schema: {
        ...documented('deprecateToolVersion', tags),
        summary: 'Deprecate a version; it retires when the migration window (default 30 days) ends',
        params: toolParams,
        body: {
          type: ['object', 'null'],
          additionalProperties: false,
          properties: {
            window_days: { type: 'number', minimum: 0, maximum: 3650 },
            reason: { type: 'string', maxLength: 2000 },
          },
        },
        response: { 200: detailRef, ...errors(400, 401, 404, 409) },
      },
    },
    async (req) => {
      const { id, version } = req.params as { id: string; version: string };
      const body = (req.body ?? {}) as { window_days?: number; reason?: string };
      return admin.catalog.deprecate(id, version, actorOf(req), {
        ...(body.window_days !== undefined ? { windowDays: body.window_days } : {}),
        ...(body.reason !== undefined ? { reason: body.reason } : {}),
      });
    },
  );

  app.post(
    '/v1/tools/:id/versions/:version/extend',
    {
      config: { action: 'tools.manage', ownedTool: 'version' },
      schema: {
        ...documented('extendToolVersionMigration', tags),
        summary:
          "Extend a deprecated version's migration window by whole days (audited); it stays callable, with its warning, until then",
        params: toolParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['days'],
          properties: {
            days: { type: 'integer', minimum: 1, maximum: 3650 },
            reason: { type: 'string', maxLength: 2000 },
          },
        },
        response: { 200: detailRef, ...errors(400, 401, 404, 409) },
      },
    },
    async (req) => {
      const { id, version } = req.params as { id: string; version: string };
      const body = req.body as { days: number; reason?: string };
      return admin.catalog.extendDeprecation(id, version, actorOf(req), {
        days: body.days,
        ...(body.reason !== undefined ? { reason: body.reason } : {}),
      });
    },
  );

  app.post(
    '/v1/tools/:id/versions/:version/retire',
    {
      config: { action: 'tools.manage', ownedTool: 'version' },
      schema: {
        ...documented('retireToolVersion', tags),
        summary: 'Retire a version now; calls to it are denied from then on',
        params: toolParams,
        body: {
          type: ['object', 'null'],
          additionalProperties: false,
          properties: { reason: { type: 'string', maxLength: 2000 } },
        },
        response: { 200: detailRef, ...errors(400, 401, 404, 409) },
      },
    },
    async (req) => {
      const { id, version } = req.params as { id: string; version: string };
      const body = (req.body ?? {}) as { reason?: string };
      return admin.catalog.retire(
        id,
        version,
        actorOf(req),
        body.reason !== undefined ? { reason: body.reason } : {},
      );
    },
  );

  for (const op of ['quarantine', 'release'] as const) {
    app.post(
      `/v1/tools/:id/versions/:version/${op}`,
      {
        // Taking a tool out of service is its owners' call too; letting a flagged description
        // back in is a security decision, an admin's.
        config:
          op === 'quarantine'
            ? { action: 'tools.manage' as const, ownedTool: 'version' as const }
            : { action: 'administer' as const },
        schema: {
          ...documented(QUARANTINE_IDS[op], tags),
          summary:
            op === 'release'
              ? 'Release a quarantined version explicitly (recorded with the reason and the findings)'
              : 'Quarantine a version: it stays registered and is no longer offered',
          params: toolParams,
          body: reasonBody,
          response: { 200: detailRef, ...errors(400, 401, 404, 409) },
        },
      },
      async (req) => {
        const { id, version } = req.params as { id: string; version: string };
        const { reason } = req.body as { reason: string };
        return admin.catalog[op](id, version, actorOf(req), reason);
      },
    );
  }
}
