/**
 * @module Agent-facing routes: open a session, list its tools (with an ETag a client revalidates
 * its cached definitions against), call a tool through the gate, read an approval a call waits for
 * and the outcome of a call made under an idempotency key.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { type AdminApi, type AgentApi, stepUpChallenge } from '../../../api/index.js';
import { ERROR_CODES, type ErrorBody, ToolgateError } from '../../../core/index.js';
import { USER_ID_PATTERN } from '../../../domain/identity/index.js';
import type { DeprecationNotice, GateDecision } from '../../../gate/index.js';
import { sentAsProblem } from '../error-reply.js';
import { agentOf } from '../request-actor.js';
import { restTraceOrigin } from '../request-ids.js';
import { described, documented, errors, noContent } from '../wire-schemas.js';

const agentAuth = { auth: 'agent' as const };
const APPROVAL_CAP_RETRY_AFTER_S = 60;
/** The pending-approval caps' rules: per session, per agent, a principal's share of the agent's. */
const APPROVAL_CAP_RULES: ReadonlySet<string> = new Set([
  'approval.pending_cap',
  'approval.agent_pending_cap',
  'approval.principal_pending_cap',
]);
const security = [{ agentKey: [] }];
const sessionParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', pattern: '^[A-Za-z0-9_.:@+-]{1,100}$' } },
} as const;
const approvalParams = {
  type: 'object',
  required: ['id', 'approval'],
  properties: {
    id: sessionParams.properties.id,
    approval: { type: 'string', pattern: '^[A-Za-z0-9_.:@+-]{1,100}$' },
  },
} as const;

/**
 * The validator of a session's tool list: a hash of exactly what is sent, so it changes when the
 * permitted set, a definition or the format does, and a client's cached copy is stale then.
 */
function toolsEtag(format: string, tools: unknown[]): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([format, tools]))
    .digest('base64url');
  return `"${digest}"`;
}

/** RFC 9110 §13.1.2: If-None-Match names one of the listed tags (or `*`). */
function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .some((t) => t === '*' || t === etag);
}

/** A denied call's answer: problem details when asked (error-reply.ts), else the error body. */
function denied(reply: FastifyReply, status: number, body: ErrorBody): FastifyReply {
  return sentAsProblem(reply, status, body) ? reply : reply.status(status).send(body);
}

/** Allowed → 200, pending approval → 202, denied → the code's status with `{ code, message, details }`. */
export function sendDecision(reply: FastifyReply, decision: GateDecision): FastifyReply {
  switch (decision.kind) {
    case 'allow':
      if (decision.deprecation) deprecationHeaders(reply, decision.deprecation);
      return reply.status(200).send({
        kind: 'allow',
        call_id: decision.callId,
        tool: decision.toolId,
        version: decision.version,
        output: decision.output,
        warnings: decision.warnings,
        ...(decision.deprecation ? { deprecation: decision.deprecation } : {}),
        ...(decision.trust ? { trust: decision.trust } : {}),
      });
    case 'pending_approval':
      return reply.status(202).send({
        kind: 'pending_approval',
        call_id: decision.callId,
        approval_id: decision.approvalId,
        rendered: decision.rendered,
        message: decision.message,
      });
    case 'deny':
      // Approvals are decided by people: an agent at a pending cap waits minutes, not a window.
      if (APPROVAL_CAP_RULES.has(decision.rule))
        void reply.header('retry-after', String(APPROVAL_CAP_RETRY_AFTER_S));
      return denied(reply, ERROR_CODES[decision.code].http, {
        code: decision.code,
        message: decision.message,
        details: {
          rule: decision.rule,
          call_id: decision.callId,
          ...(typeof decision.details === 'object' && decision.details !== null
            ? decision.details
            : {}),
        },
      });
  }
}

/**
 * A deprecated version's call (C2): `Deprecation` as an RFC 9745 structured date (`@` and Unix
 * seconds), `Sunset` as an RFC 8594 HTTP-date (the end of the migration window).
 */
function deprecationHeaders(reply: FastifyReply, notice: DeprecationNotice): void {
  const deprecated = notice.deprecated_at === null ? Number.NaN : Date.parse(notice.deprecated_at);
  if (Number.isFinite(deprecated)) {
    void reply.header('deprecation', `@${Math.floor(deprecated / 1000)}`);
  } else {
    // Deprecated at an unknown time: RFC 9745 still wants a date; the epoch says "already".
    void reply.header('deprecation', '@0');
  }
  const sunset = notice.retire_at === null ? Number.NaN : Date.parse(notice.retire_at);
  if (Number.isFinite(sunset)) void reply.header('sunset', new Date(sunset).toUTCString());
}

/** Agent routes get the agent API; the one admin view (GET /v1/sessions/:id) the admin API. */
export function sessionRoutes(app: FastifyInstance, agent: AgentApi, admin: AdminApi): void {
  app.post(
    '/v1/sessions',
    {
      config: agentAuth,
      schema: {
        ...documented('openSession', ['sessions']),
        summary: 'Open a session (as an agent), optionally on behalf of a user and for a run',
        security,
        body: {
          type: ['object', 'null'],
          additionalProperties: false,
          properties: {
            on_behalf_of: { type: 'string', pattern: USER_ID_PATTERN },
            run_id: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$' },
            ttl_seconds: { type: 'integer', minimum: 1, maximum: 604_800 },
          },
        },
        response: described(201, 'The session opened, with its permitted tools', 400, 401, 404),
      },
    },
    async (req, reply) => {
      const body = (req.body ?? {}) as {
        on_behalf_of?: string;
        run_id?: string;
        ttl_seconds?: number;
      };
      const session = await agent.sessions.open(agentOf(req), {
        ...(body.on_behalf_of !== undefined ? { onBehalfOf: body.on_behalf_of } : {}),
        ...(body.run_id !== undefined ? { runId: body.run_id } : {}),
        ...(body.ttl_seconds !== undefined ? { ttlSeconds: body.ttl_seconds } : {}),
      });
      return reply.status(201).send(session);
    },
  );

  app.get(
    '/v1/sessions/:id/tools',
    {
      config: agentAuth,
      schema: {
        ...documented('listSessionTools', ['sessions']),
        summary:
          "The session's permitted tools as MCP tools/list entries, OpenAI function tools or Anthropic tools",
        security,
        params: sessionParams,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            format: { type: 'string', enum: ['mcp', 'openai', 'anthropic'], default: 'mcp' },
          },
        },
        response: {
          ...described(200, 'The permitted tools in the requested format'),
          ...described(304, 'Unchanged since the ETag sent in If-None-Match'),
          ...errors(400, 401, 404),
        },
      },
    },
    async (req, reply) => {
      const { id } = req.params as { id: string };
      const { format } = req.query as { format: 'mcp' | 'openai' | 'anthropic' };
      const tools = await agent.sessions.exportTools(id, agentOf(req), format);
      const etag = toolsEtag(format, tools);
      void reply.header('etag', etag).header('cache-control', 'private, no-cache');
      if (noneMatch(req.headers['if-none-match'], etag)) return reply.status(304).send();
      return { tools };
    },
  );

  app.get(
    '/v1/sessions/:id/approvals/:approval',
    {
      config: agentAuth,
      schema: {
        ...documented('getSessionApproval', ['sessions']),
        summary: "The status of an approval one of the caller's calls waits for",
        description:
          "Through the caller's own session, any approval of the same principal (asked in this session or another of its runs). pending until an approver decides; once `approved`, retry the same call with the same arguments (and idempotency key), from any session of the same principal, to run it. `rejected`, `expired` and `withdrawn` are final; who decided is not shown. Another principal's approval is 404.",
        security,
        params: approvalParams,
        response: described(200, 'The status of the approval', 400, 401, 404),
      },
    },
    async (req) => {
      const { id, approval } = req.params as { id: string; approval: string };
      return agent.approvalStatus(id, agentOf(req), approval);
    },
  );

  app.get(
    '/v1/sessions/:id/idempotency/:key',
    {
      config: agentAuth,
      schema: {
        ...documented('getIdempotentCall', ['sessions']),
        summary: 'The outcome of the call this principal made under an idempotency key',
        description:
          "`succeeded` (with `output` and its `trust` label), `failed` (with `error`: the code, rule and message it ended with; a retry under the key is answered the same and never runs it again), `running` (it has not ended: ask again later), or `unknown` (it was started and its outcome was not recorded — it may have run; do not send it again under a new key). The key belongs to the whole principal (the agent, the session's user and the credential that opened the session) and is scoped to `tool` (the name or id the call used); a key never used, expired, or another principal's is 404 IDEMPOTENCY_KEY_NOT_FOUND alike.",
        security,
        params: {
          type: 'object',
          required: ['id', 'key'],
          properties: {
            id: sessionParams.properties.id,
            key: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,128}$' },
          },
        },
        querystring: {
          type: 'object',
          additionalProperties: false,
          required: ['tool'],
          properties: { tool: { type: 'string', minLength: 1, maxLength: 200 } },
        },
        response: described(200, 'The outcome of the call made under the key', 400, 401, 404),
      },
    },
    async (req) => {
      const { id, key } = req.params as { id: string; key: string };
      const { tool } = req.query as { tool: string };
      return agent.callOutcome(id, agentOf(req), tool, key);
    },
  );

  app.post(
    '/v1/sessions/:id/calls',
    {
      config: agentAuth,
      schema: {
        ...documented('callTool', ['sessions']),
        summary: 'Call a tool through the gate',
        description:
          '200 with the output when allowed (a deprecated version adds `Deprecation` and `Sunset` headers and a `deprecation` member); 202 with the approval id and the rendered call when it needs approval (retry the same call once approved); otherwise the denial as `{ code, message, details: { rule, call_id } }`. An OAuth token whose scopes do not cover the tool gets 403 INSUFFICIENT_SCOPE with a step-up challenge (`WWW-Authenticate: Bearer error="insufficient_scope", scope=…`).',
        security,
        params: sessionParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['tool', 'arguments'],
          properties: {
            tool: {
              type: 'string',
              maxLength: 200,
              description:
                'The tool name or id; `name@<major>` pins a major version the session offers (docs/tools-and-catalog.md, "Versions side by side")',
            },
            arguments: { description: 'The tool arguments (a JSON object)' },
            idempotency_key: { type: 'string', maxLength: 128 },
            model: { type: 'string', maxLength: 200 },
          },
        },
        response: {
          ...described(200, 'The call ran: its result and trust label'),
          ...described(202, 'The call waits for an approval; retry it once approved'),
          ...errors(400, 401, 403, 404, 409, 410, 413, 422, 429, 502, 503, 504),
        },
      },
    },
    async (req, reply) => {
      const { id } = req.params as { id: string };
      const body = req.body as {
        tool: string;
        arguments: unknown;
        idempotency_key?: string;
        model?: string;
      };
      const decision = await agent.invoke(
        {
          principal: agentOf(req),
          sessionId: id,
          ...(body.model !== undefined ? { model: body.model } : {}),
          trace: restTraceOrigin(req),
        },
        body.tool,
        body.arguments,
        body.idempotency_key !== undefined ? { idempotencyKey: body.idempotency_key } : {},
      );
      // The gate's scope step refused an OAuth token whose scopes miss the tool: the same
      // step-up challenge as MCP tools/call, its scope the only detail.
      if (decision.kind === 'deny' && decision.code === 'INSUFFICIENT_SCOPE') {
        const { scope } = decision.details as { scope: string };
        void reply.header('www-authenticate', stepUpChallenge(agent.oauth, scope));
        throw new ToolgateError('INSUFFICIENT_SCOPE', decision.message, { scope });
      }
      return sendDecision(reply, decision);
    },
  );

  app.delete(
    '/v1/sessions/:id',
    {
      config: agentAuth,
      schema: {
        ...documented('closeSession', ['sessions']),
        summary: 'Close a session; its later calls are refused',
        security,
        params: sessionParams,
        response: noContent('The session is closed', 400, 401, 404),
      },
    },
    async (req, reply) => {
      await agent.sessions.close((req.params as { id: string }).id, agentOf(req));
      return reply.status(204).send();
    },
  );

  app.get(
    '/v1/sessions/:id',
    {
      config: { action: 'state.read' },
      schema: {
        ...documented('getSession', ['sessions']),
        summary: 'Admin view of a session: its tools and what was withheld, and why',
        params: sessionParams,
        response: described(200, 'The session, its tools and what was withheld', 401, 404),
      },
    },
    async (req) => admin.sessions.inspect((req.params as { id: string }).id),
  );
}
