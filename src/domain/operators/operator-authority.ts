/**
 * @module The operator authority: the one place that decides what a person may do, for REST, the
 * CLI and the console alike (docs/architecture.md §6, docs/security-model.md "One operator
 * authority"). Its rules are data: OPERATOR_ACTIONS names every action a front offers and the
 * roles that may take it, and whether an `owner` is limited to their teams' tools there. It
 * decides only on the account as read for this request (`account`): a personal token joined with
 * its account, a console session joined with its account, or the bootstrap token; never on
 * anything a sign-in, a token or a session remembered. Every refusal it makes is written to the
 * audit log through its port (OperatorRefusals) before the front answers, whichever front asked
 * (INVARIANTS 14), so no front can forget to.
 */
import type { Actor, OperatorPrincipal } from '../../core/index.js';
import { ToolgateError } from '../../core/index.js';
import {
  BOOTSTRAP_ACTOR_ID,
  BOOTSTRAP_OPERATOR,
  isBootstrap,
  type Operator,
  type OperatorRole,
  operatorActor,
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

/**
 * Who is asking, for the words of a refusal and its audit record: each front names the request its
 * own way. `route` is the route as declared (`/v1/tools/:id`), never the path a caller sent.
 */
export type Asking =
  /** A REST route, named as `METHOD /route`. */
  | { readonly via: 'rest'; readonly method: string; readonly route: string }
  /** A CLI command, e.g. `secrets list` (the words that name it, never its arguments). */
  | { readonly via: 'cli'; readonly command?: string }
  /**
   * A console page (GET) or form (POST): `what` names the act ("a security review"); absent for
   * the shell.
   */
  | {
      readonly via: 'console';
      readonly what?: string;
      readonly method?: string;
      readonly route?: string;
    };

/** One refusal as the audit log records it (event `operator.forbidden`, subject the operator). */
export interface OperatorRefusal {
  /** Who was refused, as their allowed actions are recorded: `operator:<id>` and the front. */
  readonly actor: Actor;
  /**
   * The event: `operator.forbidden` (a role refusal) unless another is named —
   * `console.form_refused` for a console form sent from another origin or with a wrong token.
   */
  readonly event?: 'console.form_refused';
  readonly subject: string;
  readonly details: {
    readonly edge: Asking['via'];
    readonly operator: string;
    /** The action of the table, when the front named one (a console extension page names roles). */
    readonly action?: OperatorAction;
    readonly method?: string;
    readonly route?: string;
    readonly command?: string;
    /** The team an owner-limited operator was refused for. */
    readonly team?: string;
    readonly roles: readonly OperatorRole[];
    readonly held: readonly OperatorRole[];
    /** Why a console form was refused before any role check. */
    readonly reason?: 'cross_origin' | 'csrf';
  };
}

/** Where the authority writes its refusals: the audit log (the operator service appends them). */
export interface OperatorRefusals {
  /** Never throws: a refusal stands whether or not its record could be written. */
  refused(refusal: OperatorRefusal): Promise<void>;
}

const NO_REFUSAL_LOG: OperatorRefusals = { refused: async () => undefined };

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
  const what = `${asking.method} ${asking.route}`;
  const message = isBootstrap(op)
    ? `the bootstrap admin token cannot call ${what}: it needs the role ${needed}, held only by operator accounts`
    : `${what} needs the role ${needed}; operator ${op.id} holds ${op.roles.join(', ') || 'none'}`;
  return new ToolgateError('FORBIDDEN', message, { roles: [...roles] });
}

function refusalOf(
  op: Operator,
  action: OperatorAction | undefined,
  roles: readonly OperatorRole[],
  asking: Asking,
  team?: string,
): OperatorRefusal {
  const where =
    asking.via === 'cli'
      ? { ...(asking.command !== undefined ? { command: asking.command } : {}) }
      : {
          ...(asking.method !== undefined ? { method: asking.method } : {}),
          ...(asking.route !== undefined ? { route: asking.route } : {}),
        };
  return {
    actor: operatorActor(op, asking.via),
    subject: `operator:${op.id}`,
    details: {
      edge: asking.via,
      operator: op.id,
      ...(action !== undefined ? { action } : {}),
      ...where,
      ...(team !== undefined ? { team } : {}),
      roles: [...roles],
      held: [...op.roles],
    },
  };
}

/**
 * Decides what a person may do. Every front asks it, by action name, with the operator its
 * authentication read for this very request; it keeps nothing between requests.
 */
export class OperatorAuthority {
  readonly #accounts: OperatorAccounts;
  readonly #refusals: OperatorRefusals;

  constructor(accounts: OperatorAccounts, refusals: OperatorRefusals = NO_REFUSAL_LOG) {
    this.#accounts = accounts;
    this.#refusals = refusals;
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

  /**
   * Refuses, with FORBIDDEN naming the roles needed, an operator who may not take the action; the
   * refusal is in the audit log before the promise rejects. What every front awaits.
   */
  async enforce(op: Operator, action: OperatorAction, asking: Asking): Promise<void> {
    await this.#enforce(op, action, rolesOf(action), asking);
  }

  /**
   * The same check for roles a console extension page names itself (its contract predates the
   * table; the built-in pages take theirs from it).
   */
  async enforceRoles(op: Operator, roles: readonly OperatorRole[], asking: Asking): Promise<void> {
    await this.#enforce(op, undefined, roles, asking);
  }

  async #enforce(
    op: Operator,
    action: OperatorAction | undefined,
    roles: readonly OperatorRole[],
    asking: Asking,
  ): Promise<void> {
    if (holdsAny(op, roles)) return;
    await this.#record(refusalOf(op, action, roles, asking));
    throw forbiddenFor(op, roles, asking);
  }

  /**
   * Records a console form refused before any role check — sent from another origin, or with a
   * stale or forged token — as the signed-in operator's refusal (`console.form_refused`): the
   * forged cross-site decision is the attempt an auditor wants to see. Never throws.
   */
  async formRefused(op: Operator, reason: 'cross_origin' | 'csrf', asking: Asking): Promise<void> {
    const refusal = refusalOf(op, undefined, [], asking);
    await this.#record({
      ...refusal,
      event: 'console.form_refused',
      details: { ...refusal.details, reason },
    });
  }

  /**
   * `enforce` for a caller that cannot wait: the same refusal, its record written without waiting
   * for it (a front answers with `enforce`, so the record is written before the answer).
   */
  require(op: Operator, action: OperatorAction, asking: Asking): void {
    this.#require(op, action, rolesOf(action), asking);
  }

  /** `enforceRoles` for a caller that cannot wait (see `require`). */
  requireRoles(op: Operator, roles: readonly OperatorRole[], asking: Asking): void {
    this.#require(op, undefined, roles, asking);
  }

  #require(
    op: Operator,
    action: OperatorAction | undefined,
    roles: readonly OperatorRole[],
    asking: Asking,
  ): void {
    if (holdsAny(op, roles)) return;
    void this.#record(refusalOf(op, action, roles, asking));
    throw forbiddenFor(op, roles, asking);
  }

  #record(refusal: OperatorRefusal): Promise<void> {
    return this.#refusals.refused(refusal).catch(() => undefined);
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

  /** Refuses an owner-only caller for a team that is not theirs; audited like `enforce`. */
  async enforceTeam(
    op: Operator,
    action: OperatorAction,
    team: string,
    asking: Asking,
  ): Promise<void> {
    if (!this.ownerOnly(op, action) || op.teams.includes(team)) return;
    await this.#record(refusalOf(op, action, ['admin'], asking, team));
    throw teamRefusal(op, team);
  }

  /** `enforceTeam` for a caller that cannot wait and names no request (not audited). */
  requireTeam(op: Operator, action: OperatorAction, team: string): void {
    if (!this.ownerOnly(op, action) || op.teams.includes(team)) return;
    throw teamRefusal(op, team);
  }
}

function teamRefusal(op: Operator, team: string): ToolgateError<'FORBIDDEN'> {
  return new ToolgateError(
    'FORBIDDEN',
    `operator ${op.id} owns the tools of ${op.teams.join(', ') || 'no team'}, not of ${team}`,
    { roles: ['admin'] },
  );
}
