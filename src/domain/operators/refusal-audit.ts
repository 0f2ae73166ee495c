/**
 * @module The four-eyes refusals of the operator acts, written to the audit log by the service that
 * refuses, so no front (REST, CLI, console, library) can forget them (INVARIANTS 14; attack round
 * 9, F5; docs/security-model.md, "Four eyes: two people, not two accounts"). The authority's role
 * refusals are `operator.forbidden` (operator-authority.ts), a refused confirmation is
 * `operator.confirm_refused` (operator-service.ts).
 */
import type { Kysely } from 'kysely';
import { type Actor, ToolgateError } from '../../core/index.js';
import { appendEvent, type Database } from '../../records/store/index.js';
import { HandOverRefused } from './confirmation.js';
import { type Operator, operatorActor } from './operator.js';

/** The operator act a refusal stopped, as its record names it. */
export type OperatorAct =
  | 'create'
  | 'update'
  | 'set_password'
  | 'issue_token'
  | 'revoke_token'
  | 'enrol_second_factor'
  | 'remove_second_factor'
  | 'unlock_second_factor'
  | 'apply';

/**
 * Why four eyes refused: the shared bootstrap secret acting on a decider once the first admin is
 * set up, an operator changing their own roles, replacing or removing their own second factor
 * without a current code of it (attack round 10, F1), or an admin disabling their own account
 * (another admin does it, so the last admin cannot lock everyone out by mistake), an admin
 * clearing her own second-factor failures (attack round 11, F8: it would reset the guessing
 * guard and suppress its alert; another admin unlocks her), or the shared bootstrap secret
 * minting a credential of a single sign-on account (attack round 11, F1), or an applied file
 * that would leave no enabled admin account (`apply -f`, whose one transaction can change many
 * accounts at once) or a change of one account that would (two admins disabling each other at
 * once: attack round 22, Y9), or an author whose own account was disabled (`actor_disabled`) or
 * changed (`actor_changed`: a role or team the request was authenticated with is gone) by another
 * write that committed while this one waited for the accounts' lock (operator-lock.ts).
 */
export type FourEyesReason =
  | 'bootstrap_after_setup'
  | 'bootstrap_on_sso'
  | 'own_roles'
  | 'own_second_factor'
  | 'own_account_disabled'
  | 'own_unlock'
  | 'last_admin'
  | 'actor_disabled'
  | 'actor_changed';

/** FORBIDDEN by a four-eyes rule, naming the account the act was on. */
export class FourEyesRefused extends ToolgateError<'FORBIDDEN'> {
  /** The account the act was on. */
  readonly target: string;
  readonly reason: FourEyesReason;
  constructor(message: string, target: string, reason: FourEyesReason) {
    super('FORBIDDEN', message, {});
    this.target = target;
    this.reason = reason;
  }
}

/**
 * Runs `work` (an operator act, its checks and its transaction) and, when a four-eyes rule refuses
 * it, audits the refusal before throwing it on: outside the rolled-back transaction, one record,
 * actor who tried, subject the account, never a secret. `operator.four_eyes_refused` (details:
 * edge, act, reason, message) for FourEyesRefused, `operator.hand_over_refused` for an unconfirmed
 * account's hand-over (confirmation.ts). Other errors pass through unrecorded.
 */
export function auditRefusal<T>(
  db: Kysely<Database>,
  by: Operator,
  via: Actor['via'],
  now: () => Date,
  act: OperatorAct,
  work: () => Promise<T>,
): Promise<T> {
  return auditRefusalAs(db, operatorActor(by, via), now, act, work);
}

/** auditRefusal for an act whose API takes the recorded actor rather than the operator. */
export async function auditRefusalAs<T>(
  db: Kysely<Database>,
  actor: Actor,
  now: () => Date,
  act: OperatorAct,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof FourEyesRefused) {
      await appendEvent(db, actor, now(), {
        action: 'operator.four_eyes_refused',
        subject: `operator:${err.target}`,
        details: { edge: actor.via, act, reason: err.reason, message: err.message },
      });
    } else if (err instanceof HandOverRefused) {
      await appendEvent(db, actor, now(), {
        action: 'operator.hand_over_refused',
        subject: `operator:${err.target}`,
        details: { reason: 'unconfirmed', message: err.message },
      });
    }
    throw err;
  }
}
