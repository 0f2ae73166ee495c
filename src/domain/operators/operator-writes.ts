/**
 * @module The writes of an operator account inside a caller's transaction, with every rule of
 * `operators create` and `operators update` (docs/security-model.md, "Four eyes: two people, not
 * two accounts"): the bootstrap token's limits once the first admin is set up, nobody changing
 * their own roles or disabling their own account, a deciding role or a password handed over
 * clearing the account's confirmation. The service's own acts and `apply -f` both write here, so
 * an applied file is held to exactly the same rules. Never returns on a refusal: it throws, and the
 * caller's `auditRefusal` records a four-eyes one after the transaction rolled back.
 */
import type { Transaction } from 'kysely';
import { type Actor, problem, ToolgateError } from '../../core/index.js';
import { appendEvent, type Database } from '../../records/store/index.js';
import { recordHandOver } from './confirmation.js';
import { endSessionsOf } from './console-sessions.js';
import { isBootstrap, type Operator, type OperatorRole, operatorActor } from './operator.js';
import { enabledAdmins, keepAnAdminIn } from './operator-lock.js';
import {
  decides,
  notFound,
  type OperatorUpdate,
  refuseBootstrapAfterSetup,
  refuseBootstrapOnDecider,
  rolesOf,
  selectOperator,
  writeOperatorUpdate,
} from './operator-records.js';
import { parseName, parseRoles, parseTeams } from './operator-spec.js';
import { FourEyesRefused } from './refusal-audit.js';

type Trx = Transaction<Database>;

/** A local account as it is to be created: every field already checked. */
export interface NewAccount {
  readonly id: string;
  readonly name: string;
  readonly roles: readonly OperatorRole[];
  readonly teams: readonly string[];
  /** A hash made by the caller (hashing is slow: never inside a transaction); null for none. */
  readonly passwordHash: string | null;
}

/**
 * Creates local account `account.id` as `by`: `operator.created`, and a deciding role or a
 * password given at creation handed over like any later one. A taken id is a unique violation.
 */
export async function insertOperatorIn(
  trx: Trx,
  by: Operator,
  account: NewAccount,
  via: Actor['via'],
  now: Date,
): Promise<void> {
  const { id, name, roles, teams, passwordHash } = account;
  if (decides(roles)) {
    await refuseBootstrapAfterSetup(trx, by, id, 'create an approver or an admin');
  }
  await trx
    .insertInto('operators')
    .values({
      id,
      name,
      roles: JSON.stringify(roles),
      teams: JSON.stringify(teams),
      kind: 'local',
      disabled: 0,
      password_hash: passwordHash,
      oidc_issuer: null,
      oidc_subject: null,
      email: null,
      created_at: now.toISOString(),
      created_by: operatorActor(by, via).id,
      updated_at: now.toISOString(),
    })
    .execute();
  await appendEvent(trx, operatorActor(by, via), now, {
    action: 'operator.created',
    subject: `operator:${id}`,
    details: { kind: 'local', roles, teams, password: passwordHash !== null },
  });
  if (decides(roles) || passwordHash !== null) {
    await recordHandOver(
      trx,
      by,
      id,
      via,
      now,
      decides(roles) ? `create the ${roles.join(', ')} account` : 'set the password of',
    );
  }
}

/** An update as it will be written: the columns, and what its event records. */
export interface CheckedUpdate {
  readonly set: { name?: string; roles?: string; teams?: string; disabled?: number };
  readonly details: Readonly<Record<string, unknown>>;
  readonly roles?: readonly OperatorRole[];
  readonly disabled?: boolean;
}

/** Checks an update of account `id` (INPUT_INVALID naming the field); writes nothing. */
export function checkUpdate(id: string, change: OperatorUpdate): CheckedUpdate {
  const set: { name?: string; roles?: string; teams?: string; disabled?: number } = {};
  const details: Record<string, unknown> = {};
  let roles: OperatorRole[] | undefined;
  if (change.name !== undefined) set.name = details.name = parseName(change.name, id);
  if (change.roles !== undefined) {
    roles = parseRoles(change.roles);
    set.roles = JSON.stringify(roles);
    details.roles = roles;
  }
  if (change.teams !== undefined) {
    const teams = parseTeams(change.teams);
    set.teams = JSON.stringify(teams);
    details.teams = teams;
  }
  if (change.disabled !== undefined) {
    if (typeof change.disabled !== 'boolean') {
      throw new ToolgateError('INPUT_INVALID', 'disabled is true or false', {
        problems: [problem('/disabled', 'a boolean', 'type')],
      });
    }
    set.disabled = change.disabled ? 1 : 0;
    details.disabled = change.disabled;
  }
  return {
    set,
    details,
    ...(roles !== undefined ? { roles } : {}),
    ...(change.disabled !== undefined ? { disabled: change.disabled } : {}),
  };
}

/** The four-eyes refusal of an admin disabling their own account. */
export const OWN_ACCOUNT_DISABLED = 'an admin cannot disable their own account';

/**
 * Changes account `id` as `by`: an admin cannot disable their own account nor change their own
 * roles (another admin does it); the bootstrap token, once the first admin is set up, changes
 * nothing about a decider; a deciding role newly granted is handed over (the account is
 * unconfirmed until another person confirms it); a lost role, another team or a disabled account
 * ends its console sessions. `operator.disabled` or `operator.updated`.
 */
export async function updateOperatorIn(
  trx: Trx,
  by: Operator,
  id: string,
  change: CheckedUpdate,
  via: Actor['via'],
  now: Date,
): Promise<void> {
  const { roles } = change;
  if (!isBootstrap(by) && by.id === id && change.disabled === true) {
    throw new FourEyesRefused(OWN_ACCOUNT_DISABLED, id, 'own_account_disabled');
  }
  // Four eyes: nobody changes their own roles (an admin giving themself `approver` would be the
  // second pair of eyes of their own changes); another admin does it.
  if (roles !== undefined && !isBootstrap(by) && by.id === id) {
    throw new FourEyesRefused(
      'an operator cannot change their own roles; another admin does it',
      id,
      'own_roles',
    );
  }
  if (roles !== undefined && decides(roles)) {
    await refuseBootstrapAfterSetup(trx, by, id, 'grant the approver or admin role');
  }
  const row = await selectOperator(trx, id);
  if (!row) throw notFound(id);
  await refuseBootstrapOnDecider(trx, by, row, roles, 'change the account');
  await writeOperatorUpdate(trx, id, { ...change.set, updated_at: now.toISOString() });
  // Granting a deciding role the account did not hold hands it deciding power: it counts in a
  // two-person decision again only once another person confirms it.
  const before = rolesOf(row.roles);
  const granted = (roles ?? []).filter(
    (r) => (r === 'approver' || r === 'admin') && !before.includes(r),
  );
  if (granted.length > 0) {
    await recordHandOver(trx, by, id, via, now, `grant ${granted.join(', ')} to`);
  }
  // A console session acts on the account as it is now: a lost role, another team or a
  // disabled account ends the sessions it had (a name change alone does not).
  const { set } = change;
  if (set.roles !== undefined || set.teams !== undefined || set.disabled !== undefined) {
    await endSessionsOf(trx, id);
  }
  await appendEvent(trx, operatorActor(by, via), now, {
    action: change.disabled === true ? 'operator.disabled' : 'operator.updated',
    subject: `operator:${id}`,
    details: change.details,
  });
}

/**
 * `operators update` and `disable`: `updateOperatorIn`, and then an enabled admin remains (the
 * caller holds the accounts' lock, so no other change commits in between: attack round 22, Y9).
 */
export async function changeOperatorIn(
  trx: Trx,
  by: Operator,
  id: string,
  change: CheckedUpdate,
  via: Actor['via'],
  now: Date,
): Promise<void> {
  const admins = await enabledAdmins(trx);
  await updateOperatorIn(trx, by, id, change, via, now);
  await keepAnAdminIn(trx, admins, 'change');
}
