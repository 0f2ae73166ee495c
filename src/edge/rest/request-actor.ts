/**
 * @module Who a REST request acts as: the operator its credential proved, or the agent principal
 * the authenticator built, never a name its body states (docs/architecture.md §6).
 */
import type { FastifyRequest } from 'fastify';
import { type Operator, operatorActor } from '../../api/index.js';
import type { Actor, AgentPrincipal } from '../../core/index.js';

/** The authenticated operator of an admin route; the auth hook refused the request otherwise. */
export function operatorOf(req: FastifyRequest): Operator {
  const op = req.operator;
  if (op === null) throw new Error('operator route reached without an authenticated operator');
  return op;
}

export function actorOf(req: FastifyRequest): Actor {
  return operatorActor(operatorOf(req), 'rest');
}

/**
 * The principal the authenticator built for an agent route, as it is (sessions and the gate are
 * bound to the whole of it); the auth hook refused the request otherwise.
 */
export function agentOf(req: FastifyRequest): AgentPrincipal {
  const principal = req.agentPrincipal;
  if (principal === null) throw new Error('agent route reached without an authenticated agent');
  return principal;
}
