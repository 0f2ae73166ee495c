/**
 * @module Discovery for agents over REST (C5, dynamic part; docs/architecture.md §6): an agent's
 * own credential, its own permitted set — a session's, or the set a session opened now would
 * get. Never the global catalog (that search is the admin route `GET /v1/discovery`).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AgentApi } from '../../../api/index.js';
import { MAX_AGENT_DISCOVERY_LIMIT } from '../../../domain/catalog/index.js';
import { agentOf } from '../request-actor.js';
import { documented, errors } from '../wire-schemas.js';

const agentAuth = { auth: 'agent' as const };
const security = [{ agentKey: [] }];

const querystring = {
  type: 'object',
  additionalProperties: false,
  properties: {
    q: { type: 'string', maxLength: 500 },
    tags: { type: 'string', maxLength: 1100, description: 'Comma-separated; every tag must match' },
    limit: { type: 'integer', minimum: 1, maximum: MAX_AGENT_DISCOVERY_LIMIT, default: 10 },
  },
} as const;

const health = {
  type: 'object',
  properties: {
    state: { type: 'string', enum: ['unchecked', 'healthy', 'degraded', 'unavailable'] },
    score: { type: 'number' },
  },
} as const;

const response = {
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
            name: { type: 'string', description: 'The name to call the tool by' },
            title: { type: 'string' },
            description: { type: 'string' },
            tags: { type: 'array', items: { type: 'string' } },
            action_class: { type: 'string' },
            access_tier: { type: 'string' },
            lifecycle: { type: 'string' },
            deprecated: { type: 'boolean' },
            retire_at: { type: ['string', 'null'] },
            sla: {
              type: ['object', 'null'],
              properties: {
                target_latency_ms: { type: 'number' },
                availability_percent: { type: 'number' },
              },
            },
            health,
            degraded: { type: 'boolean' },
            match: { type: 'number' },
            score: { type: 'number' },
            alternatives: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  id: { type: 'string' },
                  version: { type: 'string' },
                  name: { type: 'string' },
                  health,
                },
              },
            },
          },
        },
      },
    },
  },
  ...errors(400, 401, 404),
} as const;

const description =
  'Only tools the caller may be offered are searched (grants ∩ user permissions ∩ tier, not quarantined, not withheld); a tool outside that set changes nothing in the answer. Ranked by match, health, SLA and tier; a degraded tool is marked and lists healthy alternatives from the same set.';

function queryOf(req: FastifyRequest): { q?: string; tags: string[]; limit: number } {
  const q = req.query as { q?: string; tags?: string; limit: number };
  const tags = (q.tags ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  return { ...(q.q !== undefined ? { q: q.q } : {}), tags, limit: q.limit };
}

export function agentDiscoveryRoutes(app: FastifyInstance, agent: AgentApi): void {
  app.get(
    '/v1/discover',
    {
      config: agentAuth,
      schema: {
        ...documented('discoverAgentTools', ['sessions']),
        summary: 'Search the tools this agent may be offered (no session needed)',
        description,
        security,
        querystring,
        response,
      },
    },
    async (req) => agent.discovery.forAgent(agentOf(req), queryOf(req)),
  );

  app.get(
    '/v1/sessions/:id/discover',
    {
      config: agentAuth,
      schema: {
        ...documented('discoverSessionTools', ['sessions']),
        summary: "Search the session's permitted tools",
        description,
        security,
        params: {
          type: 'object',
          required: ['id'],
          properties: { id: { type: 'string', pattern: '^[A-Za-z0-9_.:@+-]{1,100}$' } },
        },
        querystring,
        response,
      },
    },
    async (req) =>
      agent.discovery.inSession((req.params as { id: string }).id, agentOf(req), queryOf(req)),
  );
}
