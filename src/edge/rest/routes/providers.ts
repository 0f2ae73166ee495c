/**
 * @module Admin routes for upstream MCP providers: register (the same code path as
 * `apply -f` with `kind: Provider`), list, show, refresh and classify imported tools, resources,
 * resource templates and prompts.
 */
import type { FastifyInstance } from 'fastify';
import type { AdminApi } from '../../../api/index.js';
import { AGENT_ID_PATTERN, pageOf } from '../../../core/index.js';
import { type PageQuery, pageQuery } from '../pagination.js';
import { actorOf } from '../request-actor.js';
import { documented, errors } from '../wire-schemas.js';

const tags = ['providers'];
const open = { type: 'object', additionalProperties: true } as const;
const nameParams = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string', pattern: AGENT_ID_PATTERN } },
} as const;

export function providerRoutes(app: FastifyInstance, admin: AdminApi): void {
  app.get(
    '/v1/providers',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('listProviders', tags),
        summary: 'Upstream MCP providers with counts of their tools by state, by name',
        querystring: { type: 'object', additionalProperties: false, properties: pageQuery },
        response: { 200: open, ...errors(400, 401) },
      },
    },
    async (req) => {
      const page = pageOf('providers', await admin.providers.list(), (p) => [p.name], 'asc', {
        ...(req.query as PageQuery),
      });
      return { providers: page.items, next_cursor: page.next_cursor };
    },
  );

  app.post(
    '/v1/providers',
    {
      config: { action: 'administer' },
      schema: {
        ...documented('putProvider', tags),
        summary: 'Register or update a provider (a Provider spec) and import its tools',
        description:
          'Imported tools are pinned by hash and stay unoffered until classified. PROVIDER_UNAVAILABLE when the upstream cannot be started or listed (the spec is kept).',
        body: open,
        response: { 200: open, ...errors(400, 401, 422, 502) },
      },
    },
    async (req) => admin.providers.register(req.body, actorOf(req)),
  );

  app.get(
    '/v1/providers/:name',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('getProvider', tags),
        summary: "A provider's spec and its imported tools (pin, state, findings)",
        params: nameParams,
        response: { 200: open, ...errors(401, 404) },
      },
    },
    async (req) => admin.providers.show((req.params as { name: string }).name),
  );

  app.post(
    '/v1/providers/:name/refresh',
    {
      config: { action: 'administer' },
      schema: {
        ...documented('refreshProvider', tags),
        summary: 'List the provider again; changed, added or dropped tools are quarantined',
        params: nameParams,
        response: { 200: open, ...errors(401, 404, 502) },
      },
    },
    async (req) => admin.providers.refresh((req.params as { name: string }).name, actorOf(req)),
  );

  app.post(
    '/v1/providers/:name/tools/:tool/classify',
    {
      config: { action: 'administer' },
      schema: {
        ...documented('classifyProviderTool', tags),
        summary: 'Classify an imported tool: registers the catalog entry provider.tool',
        params: {
          type: 'object',
          required: ['name', 'tool'],
          properties: {
            name: { type: 'string', pattern: AGENT_ID_PATTERN },
            tool: { type: 'string', minLength: 1, maxLength: 128 },
          },
        },
        body: open,
        response: { 200: open, ...errors(400, 401, 404, 409, 422) },
      },
    },
    async (req) => {
      const { name, tool } = req.params as { name: string; tool: string };
      return admin.providers.classify(name, tool, req.body, actorOf(req));
    },
  );

  app.post(
    '/v1/providers/:name/entries/classify',
    {
      config: { action: 'administer' },
      schema: {
        ...documented('classifyProviderEntry', tags),
        summary: 'Classify an imported resource, resource template or prompt so it can be offered',
        description:
          'The entry is named in the body (a URI does not fit a path segment): kind, key (URI, URI template or prompt name) and the classification. Registers its catalog entry, a draft until its security review; PROVIDER_ENTRY_STATE when the last listing does not have it.',
        params: nameParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['kind', 'key', 'classification'],
          properties: {
            kind: { enum: ['resource', 'resource_template', 'prompt'] },
            key: { type: 'string', minLength: 1, maxLength: 2048 },
            classification: open,
          },
        },
        response: { 200: open, ...errors(400, 401, 404, 409, 422) },
      },
    },
    async (req) => {
      const { name } = req.params as { name: string };
      const body = req.body as { kind: string; key: string; classification: unknown };
      return admin.providers.classifyEntry(
        name,
        body.kind,
        body.key,
        body.classification,
        actorOf(req),
      );
    },
  );
}
