/**
 * @module Which operator roles may call an admin route, and what an `owner` may touch. Each route
 * states `config.roles` (default admin only); the auth hook refuses any other operator with
 * FORBIDDEN naming the roles needed. An operator who reaches a route only through `owner` is
 * limited to tools whose `owner` is one of their teams (docs/architecture.md §6).
 */
import type { FastifyRequest } from 'fastify';
import type { AdminApi, SecurityEvents } from '../../api/index.js';
import { ToolgateError } from '../../core/index.js';
import { isBootstrap, type Operator, type OperatorRole } from '../../domain/operators/index.js';

export const DEFAULT_ROUTE_ROLES: readonly OperatorRole[] = ['admin'];
/** Read-only views of configuration and state. */
export const READERS: readonly OperatorRole[] = ['admin', 'auditor'];
/** Approvals and four-eyes changes: read by those who decide them and by auditors. */
export const APPROVAL_READERS: readonly OperatorRole[] = ['admin', 'approver', 'auditor'];
/** Deciding an approval or a change: approvers only (the bootstrap token never is one). */
export const APPROVERS: readonly OperatorRole[] = ['approver'];
/** The catalog: readers, and owners for their teams' tools. */
export const TOOL_READERS: readonly OperatorRole[] = ['admin', 'auditor', 'owner'];
/** Registration and lifecycle: admins, and owners for their teams' tools. */
export const TOOL_MANAGERS: readonly OperatorRole[] = ['admin', 'owner'];
/** Everyone with an account: who am I, my own tokens. */
export const ANY_OPERATOR: readonly OperatorRole[] = ['admin', 'approver', 'auditor', 'owner'];

/** How an owner-limited route names its tool: by id and version, or by id (every version). */
export type OwnedTool = 'version' | 'tool';

interface RouteConfig {
  readonly roles?: readonly OperatorRole[];
  readonly ownedTool?: OwnedTool;
}

function configOf(req: FastifyRequest): RouteConfig {
  return (req.routeOptions.config as RouteConfig | undefined) ?? {};
}

export function routeRoles(req: FastifyRequest): readonly OperatorRole[] {
  return configOf(req).roles ?? DEFAULT_ROUTE_ROLES;
}

/** Whether the operator reaches this route only as an `owner` (and is so limited to their teams). */
export function ownerOnly(req: FastifyRequest, op: Operator): boolean {
  const allowed = routeRoles(req).filter((r) => op.roles.includes(r));
  return allowed.length === 1 && allowed[0] === 'owner';
}

/** Refuses an operator without one of the route's roles; audited as a security event. */
export async function checkRouteRoles(
  req: FastifyRequest,
  op: Operator,
  security: SecurityEvents,
): Promise<void> {
  const roles = routeRoles(req);
  if (roles.some((r) => op.roles.includes(r))) return;
  const route = req.routeOptions.url ?? req.url.split('?')[0] ?? '';
  await security
    .record('operator.forbidden', `operator:${op.id}`, {
      method: req.method,
      route,
      roles: [...roles],
      held: [...op.roles],
    })
    .catch(() => undefined);
  // The bootstrap token is refused only where a person must act (decisions, reviews): say so.
  const message = isBootstrap(op)
    ? `the bootstrap admin token cannot call ${req.method} ${route}: it needs the role ${roles.join(' or ')}, held only by operator accounts`
    : `${req.method} ${route} needs the role ${roles.join(' or ')}; operator ${op.id} holds ${op.roles.join(', ') || 'none'}`;
  throw new ToolgateError('FORBIDDEN', message, { roles: [...roles] });
}

/** Refuses an owner-only caller for a team that is not theirs. */
export function assertOwnsTeam(req: FastifyRequest, op: Operator, team: string): void {
  if (!ownerOnly(req, op) || op.teams.includes(team)) return;
  throw new ToolgateError(
    'FORBIDDEN',
    `operator ${op.id} owns the tools of ${op.teams.join(', ') || 'no team'}, not of ${team}`,
    { roles: ['admin'] },
  );
}

/**
 * For routes with `config.ownedTool`: an owner-only caller must own the tool in the path. Another
 * team's tool is answered exactly as a tool that does not exist (same code, message and details),
 * so an owner learns neither that it exists nor which team holds it.
 */
export async function checkToolOwnership(
  req: FastifyRequest,
  op: Operator,
  admin: AdminApi,
): Promise<void> {
  const owned = configOf(req).ownedTool;
  if (owned === undefined || !ownerOnly(req, op)) return;
  const { id, version } = req.params as { id: string; version?: string };
  if (owned === 'version' && version !== undefined) {
    const { owner } = await admin.catalog.get(id, version);
    if (!op.teams.includes(owner)) {
      throw new ToolgateError('TOOL_NOT_FOUND', `no tool ${id}@${version}`, {
        toolId: id,
        version,
      });
    }
    return;
  }
  const owners = (await admin.catalog.versions(id)).map((v) => v.owner);
  if (owners.some((owner) => !op.teams.includes(owner))) {
    throw new ToolgateError('TOOL_NOT_FOUND', `no tool ${id}`, { toolId: id });
  }
}
