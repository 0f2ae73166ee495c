/**
 * @module The operator authority: the one place that decides what a person may do, for REST, the
 * CLI and the console alike (docs/architecture.md §6, docs/security-model.md "One operator
 * authority"). Its rules are data: OPERATOR_ACTIONS names every action a front offers and the
 * roles that may take it, and whether an `owner` is limited to their teams' tools there. It
 * decides only on the account as read for this request (`account`): a personal token joined with
 * its account, a console session joined with its account, or the bootstrap token; never on
 * anything a sign-in, a token or a session remembered.
 */
import type { OperatorPrincipal } from '../../core/index.js';
import { ToolgateError } from '../../core/index.js';
import {
  BOOTSTRAP_ACTOR_ID,
  BOOTSTRAP_OPERATOR,
  isBootstrap,
  type Operator,
  type OperatorRole,
} from './operator.js';

/** One row of the route → role table. */
export interface ActionRule {
  /** The roles that may take the action (any of them), in the order refusals name them. */
  readonly roles: readonly OperatorRole[];
  /**
   * An operator who reaches the action only through `owner` is limited to the tools (and the
   * teams' channels) whose owner is one of their teams.
   */
  readonly ownerScoped?: true;
  /** What the action covers, for the generated table in docs/operators-and-approvals.md. */
  readonly covers: string;
}

const ANY_OPERATOR = ['admin', 'approver', 'auditor', 'owner'] as const;

/**
 * Every action a front offers, by name, with who may take it. REST routes declare their action
 * (`config.action`, default `administer`), CLI commands theirs (`withAdmin(..., { action })`) and
 * console pages and forms theirs; nothing else holds a list of roles.
 */
export const OPERATOR_ACTIONS = {
  administer: {
    roles: ['admin'],
    covers: 'everything administrative not named below (the default of every admin route)',
  },
  'state.read': {
    roles: ['admin', 'auditor'],
    covers: 'read-only views of configuration and state: agents, events, audit, reports, metrics',
  },
  'approvals.read': {
    roles: ['admin', 'approver', 'auditor'],
    covers: 'read approvals, four-eyes changes and the review queue',
  },
  'approvals.decide': {
    roles: ['approver'],
    covers: 'approve or reject a call approval or a change; record a security review (CLI)',
  },
  'reviews.record': {
    roles: ['admin', 'approver'],
    covers: 'reach the review route (an admin without `approver` hears why from the review rules)',
  },
  'tools.read': {
    roles: ['admin', 'auditor', 'owner'],
    ownerScoped: true,
    covers: 'read the catalog and owner channels',
  },
  'tools.manage': {
    roles: ['admin', 'owner'],
    ownerScoped: true,
    covers: 'register, deprecate, retire and quarantine tools; manage owner channels',
  },
  'catalog.browse': {
    roles: ['admin', 'auditor', 'approver', 'owner'],
    ownerScoped: true,
    covers: "the console's catalog, providers and quarantine pages",
  },
  'quarantine.release': {
    roles: ['admin', 'approver'],
    covers: 'release a quarantined version from the console',
  },
  'arguments.raw': {
    roles: ['auditor'],
    covers: "see a call's raw arguments in the console's audit detail",
  },
  'operators.confirm': {
    roles: ['admin', 'approver'],
    covers: 'confirm another account (the four-eyes rules decide who, docs/security-model.md)',
  },
  'operators.self': {
    roles: ANY_OPERATOR,
    covers: 'who am I, and one’s own personal tokens',
  },
} as const satisfies Record<string, ActionRule>;

export type OperatorAction = keyof typeof OPERATOR_ACTIONS;

/** Who is asking, for the words of a refusal: each front names the request its own way. */
export type Asking =
  /** A REST route: `what` is `METHOD /route`. */
  | { readonly via: 'rest'; readonly what: string }
  | { readonly via: 'cli' }
  /** A console page or form: `what` names the act ("a security review"); absent for the shell. */
  | { readonly via: 'console'; readonly what?: string };

/** Where the authority reads accounts: the operator service. */
export interface OperatorAccounts {
  /** The account a personal token belongs to, as stored now, with the token's roles; or null. */
  authenticateToken(token: string): Promise<Operator | null>;
}

export function rolesOf(action: OperatorAction): readonly OperatorRole[] {
  return OPERATOR_ACTIONS[action].roles;
}

export function isOperatorAction(name: string): name is OperatorAction {
  return Object.hasOwn(OPERATOR_ACTIONS, name);
}

/** Whether the operator holds one of `roles`. */
export function holdsAny(op: Operator, roles: readonly OperatorRole[]): boolean {
  return roles.some((r) => op.roles.includes(r));
}

function forbiddenFor(
  op: Operator,
  roles: readonly OperatorRole[],
  asking: Asking,
): ToolgateError<'FORBIDDEN'> {
  const needed = roles.join(' or ');
  if (asking.via === 'console') {
    return asking.what === undefined
      ? new ToolgateError('FORBIDDEN', 'your roles do not allow this action', {})
      : new ToolgateError('FORBIDDEN', `${asking.what} needs the role ${needed}`, {});
  }
  // The bootstrap token is refused only where a person must act (decisions, reviews): say so.
  if (asking.via === 'cli') {
    const message = isBootstrap(op)
      ? `the bootstrap admin token cannot run this command: it needs the role ${needed}, held only by operator accounts; set TOOLGATE_TOKEN to your personal operator token (tgo_…)`
      : `this command needs the role ${needed}; operator ${op.id} holds ${op.roles.join(', ')}`;
    return new ToolgateError('FORBIDDEN', message, { roles: [...roles] });
  }
  const message = isBootstrap(op)
    ? `the bootstrap admin token cannot call ${asking.what}: it needs the role ${needed}, held only by operator accounts`
    : `${asking.what} needs the role ${needed}; operator ${op.id} holds ${op.roles.join(', ') || 'none'}`;
  return new ToolgateError('FORBIDDEN', message, { roles: [...roles] });
}

/**
 * Decides what a person may do. Every front asks it, by action name, with the operator its
 * authentication read for this very request; it keeps nothing between requests.
 */
export class OperatorAuthority {
  readonly #accounts: OperatorAccounts;

  constructor(accounts: OperatorAccounts) {
    this.#accounts = accounts;
  }

  /**
   * The account a personal token stands for, read now (expired, revoked, disabled: null); its
   * roles are the token's that the account still holds.
   */
  byToken(token: string): Promise<Operator | null> {
    return this.#accounts.authenticateToken(token);
  }

  /** The bootstrap admin token as an operator: an admin that is nobody in particular. */
  bootstrap(): Operator {
    return BOOTSTRAP_OPERATOR;
  }

  /** The principal the request carries on: the account id and how it was proven, never roles. */
  principalOf(op: Operator, via: OperatorPrincipal['via']): OperatorPrincipal {
    return {
      kind: 'operator',
      operatorId: isBootstrap(op) ? BOOTSTRAP_ACTOR_ID : op.id,
      authenticatedBy: op.authenticatedBy,
      via,
    };
  }

  /** Whether the operator may take the action at all. */
  can(op: Operator, action: OperatorAction): boolean {
    return holdsAny(op, rolesOf(action));
  }

  /** Refuses, with FORBIDDEN naming the roles needed, an operator who may not take the action. */
  require(op: Operator, action: OperatorAction, asking: Asking): void {
    this.requireRoles(op, rolesOf(action), asking);
  }

  /**
   * The same check for roles a console extension page names itself (its contract predates the
   * table; the built-in pages take theirs from it).
   */
  requireRoles(op: Operator, roles: readonly OperatorRole[], asking: Asking): void {
    if (!holdsAny(op, roles)) throw forbiddenFor(op, roles, asking);
  }

  /** Whether the operator reaches this action only as an `owner`, and so only for their teams. */
  ownerOnly(op: Operator, action: OperatorAction): boolean {
    const rule: ActionRule = OPERATOR_ACTIONS[action];
    if (rule.ownerScoped !== true) return false;
    const allowed = rule.roles.filter((r) => op.roles.includes(r));
    return allowed.length === 1 && allowed[0] === 'owner';
  }

  /** The teams the operator is limited to for this action, or null for every team. */
  teamScope(op: Operator, action: OperatorAction): readonly string[] | null {
    return this.ownerOnly(op, action) ? op.teams : null;
  }

  /** Whether the operator may take the action on a tool (or channel) of the team `owner`. */
  reaches(op: Operator, action: OperatorAction, owner: string): boolean {
    return this.can(op, action) && (!this.ownerOnly(op, action) || op.teams.includes(owner));
  }

  /** Refuses an owner-only caller for a team that is not theirs. */
  requireTeam(op: Operator, action: OperatorAction, team: string): void {
    if (!this.ownerOnly(op, action) || op.teams.includes(team)) return;
    throw new ToolgateError(
      'FORBIDDEN',
      `operator ${op.id} owns the tools of ${op.teams.join(', ') || 'no team'}, not of ${team}`,
      { roles: ['admin'] },
    );
  }
}
