/**
 * @module Who a REST request acts as: the operator its credential proved, never a name its body
 * states (docs/architecture.md §6).
 */
import type { FastifyRequest } from 'fastify';
import { type Operator, operatorActor } from '../../api/index.js';
import type { Actor } from '../../core/index.js';

/** The authenticated operator of an admin route; the auth hook refused the request otherwise. */
export function operatorOf(req: FastifyRequest): Operator {
  const op = req.operator;
  if (op === null) throw new Error('operator route reached without an authenticated operator');
  return op;
}

export function actorOf(req: FastifyRequest): Actor {
  return operatorActor(operatorOf(req), 'rest');
}
