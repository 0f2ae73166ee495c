/** @module Capability search over the offered catalog (C5, dynamic part). */
import type { FastifyInstance } from 'fastify';
import type { AdminApi } from '../../../api/index.js';
import { MAX_DISCOVERY_LIMIT } from '../../../domain/catalog/index.js';
import { documented, errors } from '../wire-schemas.js';

export function discoveryRoutes(app: FastifyInstance, admin: AdminApi): void {
  app.get(
    '/v1/discovery',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('searchCatalog', ['discovery']),
        summary: 'Search active, non-quarantined tools by text and tags, ranked (BM25)',
        description:
          'Deprecated tools are still found, flagged `deprecated: true` with their retirement date, and rank below current ones.',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            q: { type: 'string', maxLength: 500 },
            tags: {
              type: 'string',
              maxLength: 500,
              description: 'Comma-separated; every tag must match',
            },
            limit: { type: 'integer', minimum: 1, maximum: MAX_DISCOVERY_LIMIT, default: 20 },
          },
        },
        response: {
          200: {
            type: 'object',
            properties: {
              results: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    id: { type: 'string' },
                    version: { type: 'string' },
                    name: { type: 'string' },
                    description: { type: 'string' },
                    tags: { type: 'array', items: { type: 'string' } },
                    action_class: { type: 'string' },
                    access_tier: { type: 'string' },
                    lifecycle: { type: 'string' },
                    deprecated: { type: 'boolean' },
                    retire_at: { type: ['string', 'null'] },
                    score: { type: 'number' },
                  },
                },
              },
            },
          },
          ...errors(400, 401),
        },
      },
    },
    async (req) => {
      const q = req.query as { q?: string; tags?: string; limit: number };
      const tags = (q.tags ?? '')
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== '');
      return {
        results: await admin.discovery.search({
          ...(q.q !== undefined ? { q: q.q } : {}),
          tags,
          limit: q.limit,
        }),
      };
    },
  );
}
