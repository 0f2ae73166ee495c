/**
 * @module Which operators may call an admin route: each route declares its action
 * (`config.action`, default `administer`), and the operator authority decides on the account as
 * this request's credential read it, from the one route → role table (OPERATOR_ACTIONS). An
 * operator who reaches a route only through `owner` is limited to tools whose `owner` is one of
 * their teams (docs/architecture.md §6, docs/security-model.md "One operator authority").
 */
import type { FastifyRequest } from 'fastify';
import type { AdminApi, Operator, OperatorAction, OperatorAuthority } from '../../api/index.js';
import { ToolgateError } from '../../core/index.js';

export const DEFAULT_ROUTE_ACTION: OperatorAction = 'administer';

/** How an owner-limited route names its tool: by id and version, or by id (every version). */
export type OwnedTool = 'version' | 'tool';

interface RouteConfig {
  readonly action?: OperatorAction;
  readonly ownedTool?: OwnedTool;
}

function configOf(req: FastifyRequest): RouteConfig {
  return (req.routeOptions.config as RouteConfig | undefined) ?? {};
}

/** The action this route declares. */
export function routeAction(req: FastifyRequest): OperatorAction {
  return configOf(req).action ?? DEFAULT_ROUTE_ACTION;
}

/** The route as declared (`/v1/tools/:id`), for refusals and their audit records. */
function routeOf(req: FastifyRequest): { via: 'rest'; method: string; route: string } {
  return {
    via: 'rest',
    method: req.method,
    route: req.routeOptions.url ?? req.url.split('?')[0] ?? '',
  };
}

/**
 * Refuses an operator the authority does not allow this route's action; the authority audits the
 * refusal (`operator.forbidden`) as it does for every front.
 */
export async function checkRouteAction(
  req: FastifyRequest,
  op: Operator,
  authority: OperatorAuthority,
): Promise<void> {
  await authority.enforce(op, routeAction(req), routeOf(req));
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
  if (owned === undefined || !admin.operators.authority.ownerOnly(op, routeAction(req))) return;
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

/** Whether the operator reaches this route only as an `owner` (and is so limited to their teams). */
export function ownerOnly(
  req: FastifyRequest,
  op: Operator,
  authority: OperatorAuthority,
): boolean {
  return authority.ownerOnly(op, routeAction(req));
}

/** Refuses an owner-only caller for a team that is not theirs (audited by the authority). */
export async function requireOwnTeam(
  req: FastifyRequest,
  op: Operator,
  authority: OperatorAuthority,
  team: string,
): Promise<void> {
  await authority.enforceTeam(op, routeAction(req), team, routeOf(req));
}
