/**
 * @module Operators: the people who administer toolgate, distinct from agents. An operator is
 * always authenticated (local password + TOTP, single sign-on, a personal token, or the bootstrap
 * admin token); no administrative path takes a name the request states (docs/architecture.md §6).
 */
import type { Actor } from '../../core/index.js';

export const OPERATOR_ROLES = ['admin', 'approver', 'auditor', 'owner'] as const;
/**
 * `admin` manages everything but does not approve on its own account unless it also holds
 * `approver`; `approver` decides approvals, changes and security reviews; `auditor` reads
 * everything (audit, raw arguments) and changes nothing; `owner` manages its teams' tools.
 */
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

/** How the operator of this request proved who they are. */
export type OperatorAuthentication =
  | 'bootstrap'
  | 'password+totp'
  | 'password+passkey'
  | 'oidc'
  | 'personal-token';

/** A local sign-in with password and second factor, whichever factor it was. */
export function signedInWithPassword(op: Operator): boolean {
  return op.authenticatedBy === 'password+totp' || op.authenticatedBy === 'password+passkey';
}

export interface Operator {
  /** Stable, unique id (`alice`, or `oidc.<hash>` for single sign-on accounts). */
  readonly id: string;
  /** For people to read; never used to decide anything. */
  readonly name: string;
  readonly roles: readonly OperatorRole[];
  /** Teams whose tools an `owner` manages. */
  readonly teams: readonly string[];
  readonly authenticatedBy: OperatorAuthentication;
}

/** Actor id of the shared bootstrap admin token (kept from before operators existed). */
export const BOOTSTRAP_ACTOR_ID = 'admin-token';

/**
 * The operator id the demo catalog's seed reviewer acts as inside `serve --demo` (recorded as
 * `operator:demo-seed`): reserved, so no person's account shares its actor (attack round 22, Y7).
 */
export const DEMO_SEED_OPERATOR_ID = 'demo-seed';

/**
 * The shared admin token as an operator: an admin that can create the first operators and can be
 * disabled by configuration. It is nobody in particular, so it never counts as an approver.
 */
export const BOOTSTRAP_OPERATOR: Operator = Object.freeze({
  id: BOOTSTRAP_ACTOR_ID,
  name: 'bootstrap admin token',
  roles: Object.freeze(['admin'] as const),
  teams: Object.freeze([] as string[]),
  authenticatedBy: 'bootstrap',
});

export function isBootstrap(op: Operator): boolean {
  return op.authenticatedBy === 'bootstrap';
}

export function hasRole(op: Operator, role: OperatorRole): boolean {
  return op.roles.includes(role);
}

/** The actor an operator's action is recorded as: `operator:<id>`, or the bootstrap token's id. */
export function operatorActor(op: Operator, via: Actor['via']): Actor {
  return { id: isBootstrap(op) ? BOOTSTRAP_ACTOR_ID : `operator:${op.id}`, via };
}
