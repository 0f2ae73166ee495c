/**
 * @module The REST front (Fastify): admin API under /v1, OpenAPI 3.1 at /openapi.json generated
 * from the route schemas, docs at /docs, /healthz and /readyz. A thin adapter over the services.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import {
  type AdminApi,
  isOperatorAction,
  type Operator,
  type OperatorAction,
  type OperatorRole,
  rolesOf,
  type SecurityEvents,
} from '../../api/index.js';
import { type AgentPrincipal, ToolgateError } from '../../core/index.js';
import { toolDefinitionSchema } from '../../domain/catalog/index.js';
import { adminTokenMatches, bearerChallenge } from '../../domain/identity/index.js';
import { isPersonalToken } from '../../domain/operators/index.js';
import type { OidcLogin, PendingOidcLogin } from '../../domain/operators/oidc/index.js';
import type { Toolgate } from '../../host/toolgate.js';
import { configDocumentSchema } from '../../operations/config/index.js';
import {
  type OidcLogin as ConsoleOidcLogin,
  type ConsoleOptions,
  type LocalLogin,
  registerConsoleWithPasskeys,
  setSecurityHeaders,
} from '../console/index.js';
import { CONSOLE_ACTIONS, CONSOLE_PAGES } from '../console/pages/index.js';
import { type McpHttpOptions, registerMcpHttp } from '../mcp/index.js';
import {
  Admission,
  type AdmissionOptions,
  DEFAULT_ADMISSION,
  DEFAULT_OPERATOR_ADMISSION,
  principalShares,
} from './admission.js';
import { admissionHook } from './admission-hook.js';
import { refuseWhileDraining } from './drain.js';
import { makeErrorHandler } from './error-handler.js';
import { sentAsProblem } from './error-reply.js';
import { lazySchemas } from './lazy-schemas.js';
import { safeLogger } from './log-options.js';
import { observeRequests } from './observe-requests.js';
import { checkOperationId, openApiOptions } from './openapi-document.js';
import { REQUEST_ID_OPTIONS, registerRequestIds } from './request-ids.js';
import {
  checkRouteAction,
  checkToolOwnership,
  DEFAULT_ROUTE_ACTION,
  type OwnedTool,
} from './route-roles.js';
import { adminRoutes } from './routes/admin.js';
import { agentDiscoveryRoutes } from './routes/agent-discovery.js';
import { approvalRoutes } from './routes/approvals.js';
import { auditRoutes } from './routes/audit.js';
import { classifiedRoutes } from './routes/classified.js';
import { destinationSetRoutes } from './routes/destination-sets.js';
import { discoveryRoutes } from './routes/discovery.js';
import { healthRoutes } from './routes/health.js';
import { metricsRoutes } from './routes/metrics.js';
import { operatorRoutes } from './routes/operators.js';
import { ownerChannelRoutes } from './routes/owner-channels.js';
import { passkeyRoutes } from './routes/passkeys.js';
import { providerRoutes } from './routes/providers.js';
import { reportRoutes } from './routes/reports.js';
import { reviewRoutes } from './routes/reviews.js';
import { runRoutes } from './routes/runs.js';
import { secretRoutes } from './routes/secrets.js';
import { sessionRoutes } from './routes/sessions.js';
import { toolRoutes } from './routes/tools.js';
import { wellKnownRoutes } from './routes/well-known.js';
import {
  DEFAULT_STREAMS,
  DEFAULT_WAITS,
  type Eviction,
  StandingLimits,
  type StandingOptions,
} from './standing-limits.js';
import {
  described,
  documented,
  errorBody,
  errors,
  toolDetail,
  toolSummary,
} from './wire-schemas.js';

export type RouteAuth = 'admin' | 'agent' | 'public';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The principal the authenticator built on `auth: 'agent'` routes (agent, credential, token
     * user, OAuth scopes), carried as it is to every service and the gate; null elsewhere.
     */
    agentPrincipal: AgentPrincipal | null;
    /** The authenticated operator on admin routes (docs/architecture.md §6); null elsewhere. */
    operator: Operator | null;
  }
  interface FastifyInstance {
    /** Every route as registered, with who may call it (tests walk it: no route slips by). */
    readonly toolgateRoutes: readonly RegisteredRoute[];
    /** Compiles every route schema not compiled yet (lazy-schemas.ts); how many it compiled. */
    compileSchemas(): number;
  }
  interface FastifyContextConfig {
    auth?: RouteAuth;
    /**
     * The operator action this admin route is (default `administer`): who may call it is the
     * operator authority's table, OPERATOR_ACTIONS (src/edge/rest/route-roles.ts).
     */
    action?: OperatorAction;
    /** An `owner` may call it only for a tool of their teams, named by the path. */
    ownedTool?: OwnedTool;
  }
}

export interface RegisteredRoute {
  readonly method: string;
  readonly url: string;
  readonly auth: RouteAuth;
  /** The operator action of an admin route (`administer` when it names none); null otherwise. */
  readonly action: OperatorAction | null;
  /** The roles the action needs (OPERATOR_ACTIONS); empty for agent and public routes. */
  readonly roles: readonly OperatorRole[];
}

export interface HttpOptions {
  /**
   * The bootstrap admin token, or null when it is disabled by configuration (then only operators'
   * personal tokens open admin routes).
   */
  readonly adminToken: string | null;
  /** Largest accepted request body; default 1 MiB. */
  readonly bodyLimit?: number;
  readonly logger?: FastifyServerOptions['logger'];
  readonly version?: string;
  /** Where operators reach this gateway (`--public-url`): the OpenAPI document's server. */
  readonly publicUrl?: string;
  /** Limits of the MCP front at /mcp (sessions overall, per agent, idle time). */
  readonly mcp?: Pick<
    McpHttpOptions,
    | 'maxSessions'
    | 'maxSessionsPerAgent'
    | 'userSessionShare'
    | 'idleMs'
    | 'originPolicy'
    | 'listTtlMs'
    | 'runTtlSeconds'
    | 'refusalSample'
    | 'approvalWaitMs'
  >;
  /**
   * Agents' requests running and queued at once, overall and per caller (defaults in
   * DEFAULT_ADMISSION); the console's and admin routes' lane has its own (DEFAULT_OPERATOR_ADMISSION).
   */
  readonly admission?: Partial<AdmissionOptions>;
  /** Standing event streams and waits, overall, per agent and per user (standing-limits.ts). */
  readonly standing?: {
    readonly streams?: Partial<StandingOptions>;
    readonly waits?: Partial<StandingOptions>;
  };
  /** The operators' console under /console: its login ports and session timeouts. */
  readonly console?: ConsoleOptions;
  /**
   * Single sign-on for the console: the OpenID Connect relying party. Its verified identity
   * becomes an operator through `admin.operators.fromOidc` (roles and teams from the provider).
   */
  readonly sso?: Pick<OidcLogin, 'begin' | 'complete'>;
}

export const DEFAULT_BODY_LIMIT = 1024 * 1024;
const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml'];

/** Paths anyone may read: probes, the API description and the published schemas. */
function isPublic(url: string): boolean {
  // The router ignores one trailing slash; so must this check.
  const raw = url.split('?')[0] ?? '';
  const path = raw.length > 1 && raw.endsWith('/') ? raw.slice(0, -1) : raw;
  return (
    path === '/healthz' ||
    path === '/readyz' ||
    path === '/openapi.json' ||
    path === '/docs' ||
    path.startsWith('/docs/') ||
    // Discovery documents are public by definition; an unknown one is a plain 404, never a
    // request for credentials.
    path.startsWith('/.well-known/') ||
    path.startsWith('/v1/schemas/')
  );
}

/** Probes answer under any load: they are never queued or refused by admission control. */
function isProbe(url: string): boolean {
  const path = url.split('?')[0] ?? '';
  return path === '/healthz' || path === '/readyz' || path === '/healthz/' || path === '/readyz/';
}

/**
 * Agents' lane: agent routes, /mcp and the OAuth discovery documents agents' clients read. Every
 * other request (console, admin routes, docs, unknown paths) is in the operators' lane, which
 * agents' load cannot fill.
 */
function isAgentRequest(req: FastifyRequest): boolean {
  const path = req.url.split('?')[0] ?? '';
  if (path === '/mcp' || path === '/mcp/' || path.startsWith('/.well-known/')) return true;
  return (req.routeOptions.config as { auth?: RouteAuth } | undefined)?.auth === 'agent';
}

/**
 * A route as the server lists it, with its action and the roles the table gives it. An action the
 * table does not name, or roles stated inline, is a programming mistake caught at start-up, not a
 * route nobody can call.
 */
function registeredAs(route: {
  readonly url: string;
  readonly method: string | readonly string[];
  readonly config?: unknown;
}): RegisteredRoute[] {
  const config = (route.config ?? {}) as { auth?: RouteAuth; action?: string; roles?: unknown };
  // The public paths (probes, OpenAPI, discovery documents, schemas) are public whatever their
  // config says: the registry must describe what the request hook does.
  const auth = isPublic(route.url) ? 'public' : (config.auth ?? 'admin');
  if (config.roles !== undefined)
    throw new Error(`route ${route.url}: declare an action, not roles (OPERATOR_ACTIONS)`);
  const named = config.action ?? DEFAULT_ROUTE_ACTION;
  if (!isOperatorAction(named)) throw new Error(`route ${route.url}: unknown action ${named}`);
  const action = auth === 'admin' ? named : null;
  const roles = action === null ? [] : rolesOf(action);
  return [route.method].flat().map((method) => ({ method, url: route.url, auth, action, roles }));
}

/**
 * Agent routes and /mcp get `tg.agent` (and `tg.security`), admin routes `tg.admin`; nothing else
 * of the gateway reaches a route (docs/architecture.md §6).
 */
export async function buildServer(
  tg: Pick<Toolgate, 'agent' | 'admin' | 'security'>,
  options: HttpOptions,
): Promise<FastifyInstance> {
  const { agent, admin, security } = tg;
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const schemas = lazySchemas();
  const app = Fastify({
    bodyLimit,
    // A request during a stop is refused by refuseWhileDraining, with a body of the catalogue.
    return503OnClosing: false,
    schemaController: { compilersFactory: { buildSerializer: schemas.buildSerializer } },
    logger: safeLogger(options.logger),
    ...REQUEST_ID_OPTIONS,
    // Query strings like ?tags=a&tags=b must not become arrays the schemas do not expect.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 300 },
  });
  registerRequestIds(app);
  app.setErrorHandler(makeErrorHandler(bodyLimit));
  observeRequests(app, admin.metrics.requests);
  // Before every other hook; a stop ends the calls waiting for a person (drain.ts).
  refuseWhileDraining(app, () => waits.endAll());
  const registered: RegisteredRoute[] = [];
  app.decorate('toolgateRoutes', registered);
  // Every route is listed with its action as it is registered (registeredAs).
  app.addHook('onRoute', (route) => {
    checkOperationId(route);
    registered.push(...registeredAs(route));
  });
  app.decorate('compileSchemas', () => schemas.compileAll());
  app.setValidatorCompiler(schemas.validatorCompiler);
  app.setNotFoundHandler(answerNotFound);
  // Only JSON and YAML bodies: text/plain would otherwise reach the handlers as a string.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser(YAML_TYPES, { parseAs: 'string' }, (_req, body, done) =>
    done(null, body),
  );
  app.addSchema(errorBody);
  app.addSchema(toolSummary);
  app.addSchema(toolDetail);

  await app.register(swagger, openApiOptions({ ...options, toolDefinitionSchema }));
  // The API description's pages share the console's origin, so they carry the console's headers
  // (its CSP without inline script, no framing): a framed or script-injected /docs page would be a
  // way around the console's own rules on the same origin.
  await app.register(async (scope) => {
    scope.addHook('onSend', async (_req, reply, payload) => {
      setSecurityHeaders(reply);
      return payload;
    });
    await scope.register(swaggerUi, { routePrefix: '/docs', uiConfig: { validatorUrl: null } });
  });

  // Deny by default: a route is an admin route unless its config says `auth: 'agent'`
  // (agent API key) or `auth: 'public'`. Unknown routes need the admin token too, so probing
  // learns nothing.
  // Admission comes before authentication: checking a credential is work an overload must not
  // queue without bound either.
  const admission = new Admission({ ...DEFAULT_ADMISSION, ...options.admission });
  // Operators are few, and they are who stops an abusive agent: their lane is not refused for a
  // lagging event loop that agents' load may cause.
  const operatorLane = new Admission({ ...DEFAULT_OPERATOR_ADMISSION, maxEventLoopDelayMs: 0 });
  app.addHook('onClose', async () => {
    admission.stop();
    operatorLane.stop();
  });
  app.decorateRequest('admission', null);
  app.addHook(
    'onRequest',
    admissionHook({ agents: admission, operators: operatorLane }, isProbe, isAgentRequest),
  );
  // A standing entry closed for someone else is logged as the session front logs its evictions.
  const evicted = (kind: string) => (e: Eviction) =>
    app.log.info({ agent: e.agent, user: e.user ?? null, reason: e.reason }, `${kind} evicted`);
  const streams = new StandingLimits(
    'streams',
    { ...DEFAULT_STREAMS, ...options.standing?.streams },
    evicted('standing stream'),
  );
  const waits = new StandingLimits(
    'waits',
    { ...DEFAULT_WAITS, ...options.standing?.waits },
    evicted('standing wait'),
  );
  app.decorateRequest('agentPrincipal', null);
  app.decorateRequest('operator', null);
  const adminToken = options.adminToken;
  /**
   * The operator a bearer credential proves, read for this request: a personal token joined with
   * its account as stored now, or the bootstrap admin token. Nothing is cached between requests.
   */
  const authenticateOperator = async (token: string | undefined): Promise<Operator> => {
    if (token !== undefined && isPersonalToken(token)) {
      const op = await admin.operators.authority.byToken(token);
      if (op) return op;
    } else if (token !== undefined && adminToken !== null && adminTokenMatches(token, adminToken)) {
      return admin.operators.authority.bootstrap();
    }
    throw new ToolgateError(
      'UNAUTHENTICATED',
      adminToken === null
        ? 'send Authorization: Bearer <personal operator token>; the bootstrap admin token is disabled on this gateway'
        : 'send Authorization: Bearer <personal operator token or admin token>',
      {},
    );
  };
  app.addHook('onRequest', async (req, reply) => {
    const auth = (req.routeOptions.config as { auth?: RouteAuth } | undefined)?.auth ?? 'admin';
    if (auth === 'public' || isPublic(req.url)) return;
    // Well-known paths are probed by clients before they hold any credential: one toolgate
    // serves answers publicly, every other is a plain 404, never an admin-token challenge.
    if (req.url.startsWith('/.well-known/') && req.routeOptions.url === undefined) return;
    // The console guards its pages with its session cookie (register-console.ts, each route
    // public to this hook); a path under it that matches no route is its plain 404, never a
    // bearer challenge. Decided by the route the router matched, not by the path's prefix.
    if (req.routeOptions.url === undefined && /^\/console(\/|\?|$)/.test(req.url)) return;
    const header = req.headers.authorization ?? '';
    // The auth scheme is case-insensitive (RFC 9110 §11.1); the token is compared exactly.
    const token = /^Bearer ([^\s]+)$/i.exec(header)?.[1];
    if (auth === 'agent') {
      const identity = token ? await agent.authenticate(token, req.ip) : null;
      if (!identity) {
        // With OAuth configured, the challenge says where the resource metadata is (RFC 9728
        // §5.1), and that the token sent was refused.
        if (agent.oauth) {
          void reply.header(
            'www-authenticate',
            bearerChallenge({
              resourceMetadata: agent.oauth.metadataUrl,
              ...(token ? { error: 'invalid_token' } : {}),
            }),
          );
        }
        throw new ToolgateError(
          'UNAUTHENTICATED',
          'send Authorization: Bearer <agent API key or JWT>',
          {},
        );
      }
      // The principal's share of the agents' lane: its agent and its user, whatever credential.
      const refusal = req.admission?.claim(principalShares(identity.agentId, identity.user?.id));
      if (refusal) throw refusal.error;
      req.agentPrincipal = identity;
      return;
    }
    req.operator = await authenticateOperator(token);
    await checkRouteAction(req, req.operator, admin.operators.authority);
  });
  // Ownership needs the parsed path (and may read the catalog): after routing, before the handler.
  app.addHook('preHandler', async (req) => {
    if (req.operator !== null) await checkToolOwnership(req, req.operator, admin);
  });

  app.get(
    '/healthz',
    { schema: { operationId: 'getLiveness', tags: ['health'], summary: 'Liveness', security: [] } },
    async () => ({
      status: 'ok',
    }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        ...documented('getReadiness', ['health']),
        summary: 'Readiness: the database answers',
        security: [],
        response: described(200, 'Ready: `{ status, store }`', 503),
      },
    },
    async () => {
      await admin.health.ping();
      return { status: 'ready', store: admin.health.dialect };
    },
  );
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get(
    '/v1/schemas/tool.json',
    {
      schema: {
        ...documented('getToolDefinitionSchema', ['schemas']),
        summary: 'JSON Schema of a tool definition',
        security: [],
        response: {
          ...described(200, 'The JSON Schema (application/schema+json)'),
          ...errors(429, 503),
        },
      },
    },
    async (_req, reply) => reply.type('application/schema+json').send(toolDefinitionSchema),
  );
  app.get(
    '/v1/schemas/config.json',
    {
      schema: {
        ...documented('getConfigDocumentSchema', ['schemas']),
        summary: 'JSON Schema of an apply -f document',
        security: [],
        response: {
          ...described(200, 'The JSON Schema (application/schema+json)'),
          ...errors(429, 503),
        },
      },
    },
    async (_req, reply) => reply.type('application/schema+json').send(configDocumentSchema),
  );

  toolRoutes(app, admin);
  reviewRoutes(app, admin);
  sessionRoutes(app, agent, admin);
  agentDiscoveryRoutes(app, agent);
  runRoutes(app, admin);
  approvalRoutes(app, admin);
  adminRoutes(app, admin);
  discoveryRoutes(app, admin);
  healthRoutes(app, admin);
  await registerMcpHttp(app, agent, security, {
    ...options.mcp,
    version: options.version ?? '0.0.0',
    bodyLimit,
    holdOf: (req) => {
      const ticket = req.admission;
      if (!ticket) return null;
      return {
        claim: (agentId, userId) => ticket.claim(principalShares(agentId, userId))?.error ?? null,
        pause: () => ticket.pause(),
        resume: async () => (await ticket.resume())?.error ?? null,
      };
    },
    streams,
    waits,
  });
  await secretRoutes(app, admin, bodyLimit);
  auditRoutes(app, admin);
  classifiedRoutes(app, admin);
  metricsRoutes(app, admin);
  reportRoutes(app, admin);
  ownerChannelRoutes(app, admin);
  providerRoutes(app, admin);
  destinationSetRoutes(app, admin);
  for (const routes of [operatorRoutes, passkeyRoutes]) routes(app, admin);
  if (agent.oauth) wellKnownRoutes(app, agent.oauth);
  // The console guards its own routes (`auth: 'public'` here) with its session cookie.
  // Local logins are the operators' own (password + TOTP); single sign-on when configured.
  const sso = options.sso;
  await registerConsoleWithPasskeys(app, admin, {
    pages: CONSOLE_PAGES,
    actions: CONSOLE_ACTIONS,
    loginLocal: consoleLogin(admin, security),
    ...(sso ? { oidc: ssoLogin(admin, security, sso) } : {}),
    signInRefused: (reason, route, peer) =>
      security.sampled(
        'console.form_refused',
        'console:sign-in',
        { reason, route },
        {
          peer,
          value: route,
        },
      ),
    ...options.console,
  });
  await app.ready();
  return app;
}

/**
 * The console's single sign-on: the provider's identity becomes an operator; a failed one is a
 * security event with its reason, sampled per peer and reason (anyone may call the callback).
 */
function ssoLogin(
  admin: AdminApi,
  security: SecurityEvents,
  sso: NonNullable<HttpOptions['sso']>,
): ConsoleOidcLogin {
  return {
    begin: () => sso.begin(),
    complete: async (pending, query) =>
      admin.operators.fromOidc(await sso.complete(pending as PendingOidcLogin, query), 'console'),
    failed: (reason, peer) =>
      security.sampled('operator.sso_failed', 'console:sso', { reason }, { peer, value: reason }),
  };
}

/** The console's local login: the peer as its keyed hash (the rate limit's row and the audit). */
function consoleLogin(admin: AdminApi, security: SecurityEvents): LocalLogin {
  return (id, password, factor, peer) =>
    admin.operators.loginLocal(id, password, factor, 'console', security.pseudonym(peer));
}

/** No route: the console's plain 404 under /console, else the error body naming method and path. */
function answerNotFound(req: FastifyRequest, reply: FastifyReply): void {
  if (/^\/console(\/|\?|$)/.test(req.url)) {
    void reply.status(404).type('text/plain').send('not found');
    return;
  }
  const body = {
    code: 'NOT_FOUND' as const,
    message: `no route ${req.method} ${req.url.split('?')[0]}`,
    details: { method: req.method, url: req.url.split('?')[0] },
  };
  if (!sentAsProblem(reply, 404, body)) void reply.status(404).send(body);
}
