/**
 * @module Admin routes for tool health (C14): each monitored version's state, score, breaker and
 * last probe; probe coverage; a probe on demand; an admin's override with a reason and an expiry
 * (set and clear are events, so audit records). Reading is for admins and auditors;
 * changing is an admin's.
 */
import type { FastifyInstance } from 'fastify';
import type { AdminApi } from '../../../api/index.js';
import { actorOf } from '../request-actor.js';
import { documented, errors, toolParams } from '../wire-schemas.js';

const tags = ['health'];
const STATES = ['unchecked', 'healthy', 'degraded', 'unavailable'];

const viewSchema = {
  type: 'object',
  properties: { state: { type: 'string', enum: STATES }, score: { type: 'number' } },
} as const;

const statusSchema = {
  type: 'object',
  properties: {
    tool_id: { type: 'string' },
    version: { type: 'string' },
    owner: { type: 'string' },
    state: { type: 'string', enum: STATES },
    score: { type: 'number' },
    breaker: { type: 'string', enum: ['closed', 'open', 'half_open'] },
    consecutive_failures: { type: 'integer' },
    probe: { type: ['string', 'null'] },
    interval_ms: { type: 'integer' },
    last_probe_at: { type: ['string', 'null'] },
    last_probe_ok: { type: ['boolean', 'null'] },
    last_latency_ms: { type: ['integer', 'null'] },
    last_rule: { type: ['string', 'null'] },
    override: {
      type: ['object', 'null'],
      properties: {
        state: { type: 'string' },
        reason: { type: 'string' },
        set_by: { type: 'string' },
        set_at: { type: 'string' },
        expires_at: { type: 'string' },
      },
    },
  },
} as const;

export function healthRoutes(app: FastifyInstance, admin: AdminApi): void {
  app.get(
    '/v1/health/tools',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('listToolHealth', tags),
        summary: 'Health of every monitored tool version (state, score, breaker, last probe)',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { state: { type: 'string', enum: STATES } },
        },
        response: {
          200: { type: 'object', properties: { tools: { type: 'array', items: statusSchema } } },
          ...errors(400, 401),
        },
      },
    },
    async (req) => {
      const { state } = req.query as {
        state?: 'unchecked' | 'healthy' | 'degraded' | 'unavailable';
      };
      return { tools: admin.toolHealth.list(state ? { state } : {}) };
    },
  );

  app.get(
    '/v1/health/coverage',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('getProbeCoverage', tags),
        summary: 'Probe coverage: probed tools, those unprobed past their interval, the ratio',
        response: {
          200: {
            type: 'object',
            properties: {
              probed: { type: 'integer' },
              overdue: { type: 'integer' },
              ratio: { type: 'number' },
            },
          },
          ...errors(401),
        },
      },
    },
    async () => admin.toolHealth.coverage(),
  );

  app.get(
    '/v1/tools/:id/versions/:version/health',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('getToolVersionHealth', tags),
        summary: "One tool version's health",
        params: toolParams,
        response: { 200: statusSchema, ...errors(400, 401, 404) },
      },
    },
    async (req) => {
      const { id, version } = req.params as { id: string; version: string };
      return admin.toolHealth.status(id, version);
    },
  );

  app.post(
    '/v1/tools/:id/versions/:version/health/probe',
    {
      config: { action: 'administer' },
      schema: {
        ...documented('probeToolVersion', tags),
        summary: "Run the tool version's probe now, outside its schedule",
        params: toolParams,
        response: { 200: statusSchema, ...errors(400, 401, 404) },
      },
    },
    async (req) => {
      const { id, version } = req.params as { id: string; version: string };
      return admin.toolHealth.probeNow(id, version);
    },
  );

  app.put(
    '/v1/tools/:id/versions/:version/health/override',
    {
      config: { action: 'administer' },
      schema: {
        ...documented('overrideToolVersionHealth', tags),
        summary: "Override a tool version's health state until a time (audited, with a reason)",
        params: toolParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['state', 'reason', 'expires_at'],
          properties: {
            state: { type: 'string', enum: ['healthy', 'degraded', 'unavailable'] },
            reason: { type: 'string', minLength: 1, maxLength: 500 },
            expires_at: { type: 'string', format: 'date-time' },
          },
        },
        response: { 200: viewSchema, ...errors(400, 401, 404) },
      },
    },
    async (req) => {
      const { id, version } = req.params as { id: string; version: string };
      const body = req.body as { state: string; reason: string; expires_at: string };
      return admin.toolHealth.setOverride(id, version, body, actorOf(req));
    },
  );

  app.delete(
    '/v1/tools/:id/versions/:version/health/override',
    {
      config: { action: 'administer' },
      schema: {
        ...documented('clearToolVersionHealthOverride', tags),
        summary: "Clear a tool version's health override (audited)",
        params: toolParams,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { reason: { type: 'string', minLength: 1, maxLength: 500 } },
        },
        response: { 200: viewSchema, ...errors(400, 401, 404) },
      },
    },
    async (req) => {
      const { id, version } = req.params as { id: string; version: string };
      const { reason } = req.query as { reason?: string };
      return admin.toolHealth.clearOverride(id, version, actorOf(req), reason ?? 'cleared');
    },
  );
}
