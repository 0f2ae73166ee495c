/**
 * @module Operators' second factors as data (C8): an admin enrols a TOTP secret for a named
 * operator; the secret is sealed with the gateway's master key (the secrets store's cipher) in the
 * database and read on every check, so every replica sees an enrolment, a re-enrolment or a
 * removal at once (docs/architecture.md §6). Checks go through the SecondFactorGuard (attempts,
 * backoff, lockout), and an accepted step is claimed in the enrolment row, so one code is good for
 * one use across logins, approvals and changes, on any replica.
 */
import type { Kysely, Transaction } from 'kysely';
import {
  type Actor,
  type Clock,
  isToolgateError,
  problem,
  systemClock,
  ToolgateError,
} from '../../core/index.js';
import { appendEvent, type Database, lastTotpStep } from '../../records/store/index.js';
import {
  type MasterKey,
  openSecret,
  type SealedSecret,
  type SecretBinding,
  sealSecret,
} from '../credentials/index.js';
import {
  auditRefusal,
  auditRefusalAs,
  BOOTSTRAP_ACTOR_ID,
  BOOTSTRAP_OPERATOR,
  endSessionsOf,
  FourEyesRefused,
  genesisOpen,
  hasRole,
  isBootstrap,
  isGenesisAdmin,
  latchFirstAdminSetUp,
  type Operator,
  operatorActor,
  recordHandOver,
  refuseBootstrapAfterSetup,
  refuseBootstrapOnSso,
  type SecondFactorCheck,
  writeAccounts,
} from '../operators/index.js';
import { SecondFactorGuard, type SecondFactorState } from './second-factor-guard.js';
import { generateTotpSecret, isTotpCodeShaped, TOTP_DIGITS, totpUri } from './totp.js';

/** Operator ids: `alice`, `oidc.<hash>`; what an otpauth label and an actor id can carry. */
export const OPERATOR_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.@+-]{0,99}$';
const operatorIdRe = new RegExp(OPERATOR_ID_PATTERN);

/** The enrolment an admin hands to the operator, once: nothing returns the secret again. */
export interface SecondFactorEnrolment {
  readonly operator_id: string;
  readonly secret: string;
  readonly otpauth_uri: string;
  /** 1 for a first enrolment; each re-enrolment replaces the secret and counts up. */
  readonly version: number;
}

export interface OperatorSecondFactorsOptions {
  readonly clock?: Clock;
  /** The attempt counter (shared with anything else that checks codes on this store). */
  readonly guard?: SecondFactorGuard;
  /**
   * Whether an operator account with this id exists; enrolment for any other id is refused.
   * Without it only the id's shape is checked.
   */
  readonly operatorExists?: (operatorId: string) => Promise<boolean>;
}

/**
 * A current code of the caller's own second factor: replacing or removing one's own existing
 * factor needs it (attack round 10, F1); any other enrolment or removal ignores it.
 */
export interface OwnFactorProof {
  readonly totp?: unknown;
}

/**
 * Sealed under the secrets store's cipher with a binding no tool secret can have (`@` is not a
 * tool id): a tool's secret row copied here, or another operator's, or an older version of this
 * one, fails to open.
 */
function bindingOf(operatorId: string, version: number): SecretBinding {
  return { toolId: '@operator', name: operatorId, environment: 'totp', version };
}

export class OperatorSecondFactors implements SecondFactorCheck {
  readonly #db: Kysely<Database>;
  readonly #loadKey: () => MasterKey;
  #key: MasterKey | null = null;
  readonly #clock: Clock;
  readonly #guard: SecondFactorGuard;
  readonly #operatorExists: ((operatorId: string) => Promise<boolean>) | null;

  constructor(
    db: Kysely<Database>,
    /** The master key, or how to load it (on first use: a gateway without enrolments needs none). */
    masterKey: MasterKey | (() => MasterKey),
    options: OperatorSecondFactorsOptions = {},
  ) {
    this.#db = db;
    this.#loadKey = typeof masterKey === 'function' ? masterKey : () => masterKey;
    this.#clock = options.clock ?? systemClock;
    this.#guard =
      options.guard ?? new SecondFactorGuard(db, options.clock ? { clock: options.clock } : {});
    this.#operatorExists = options.operatorExists ?? null;
  }

  /**
   * Creates (or replaces) `operatorId`'s TOTP secret. Only an admin or the bootstrap operator may;
   * the secret is in this answer only. A replacement invalidates the old secret on every replica
   * at once and is audited as one. An admin replacing their own factor proves a current code of it
   * (`proof.totp`).
   */
  async enroll(
    by: Operator,
    operatorId: string,
    via: Actor['via'] = 'library',
    proof: OwnFactorProof = {},
  ): Promise<SecondFactorEnrolment> {
    await this.#mayManage(by, operatorId, 'enrol', via, proof);
    const now = this.#clock();
    const secret = generateTotpSecret();
    const key = this.#masterKey();
    // Under the operator accounts' lock, its author read again (operator-lock.ts).
    const version = await auditRefusal(this.#db, by, via, this.#clock, 'enrol_second_factor', () =>
      writeAccounts(this.#db, by, via, async (trx) => {
        const existing = await trx
          .selectFrom('operator_second_factors')
          .select('version')
          .where('operator_id', '=', operatorId)
          .executeTakeFirst();
        const next = Number(existing?.version ?? 0) + 1;
        const sealed = sealSecret(key, bindingOf(operatorId, next), secret);
        const values = {
          version: next,
          key_id: sealed.keyId,
          nonce: sealed.nonce,
          ciphertext: sealed.ciphertext,
          tag: sealed.tag,
          enrolled_at: now.toISOString(),
          enrolled_by: operatorActor(by, via).id,
        };
        if (existing) {
          await trx
            .updateTable('operator_second_factors')
            .set(values)
            .where('operator_id', '=', operatorId)
            .execute();
        } else {
          await trx
            .insertInto('operator_second_factors')
            .values({ operator_id: operatorId, last_step: null, ...values })
            .execute();
        }
        // A replaced second factor is a credential reset: the sessions the old one opened end.
        if (existing) await endSessionsOf(trx, operatorId);
        // A second factor enrolled by someone else is one they held: the account counts in a
        // two-person decision again only once another person confirms it.
        await recordHandOver(trx, by, operatorId, via, now, 'enrol a second factor for');
        // An enabled admin armed: the first admin is set up, for good.
        await latchFirstAdminSetUp(trx);
        await appendEvent(trx, operatorActor(by, via), now, {
          action: existing ? 'second_factor.replaced' : 'second_factor.enrolled',
          subject: `operator:${operatorId}`,
          details: { version: next, key_id: sealed.keyId },
        });
        return next;
      }),
    );
    return {
      operator_id: operatorId,
      secret,
      otpauth_uri: totpUri(secret, operatorId),
      version,
    };
  }

  /**
   * Removes `operatorId`'s second factor (admin or bootstrap); audited. An admin removing their own
   * proves a current code of it (`proof.totp`); a removal by anyone else unconfirms the account.
   */
  async remove(
    by: Operator,
    operatorId: string,
    via: Actor['via'] = 'library',
    proof: OwnFactorProof = {},
  ): Promise<{ operator_id: string; removed: boolean }> {
    await this.#mayManage(by, operatorId, 'remove', via, proof, false);
    const now = this.#clock();
    const removed = await auditRefusal(this.#db, by, via, this.#clock, 'remove_second_factor', () =>
      writeAccounts(this.#db, by, via, async (trx) => {
        const done = await trx
          .deleteFrom('operator_second_factors')
          .where('operator_id', '=', operatorId)
          .executeTakeFirst();
        if (Number(done.numDeletedRows) !== 1) return false;
        await endSessionsOf(trx, operatorId);
        await appendEvent(trx, operatorActor(by, via), now, {
          action: 'second_factor.removed',
          subject: `operator:${operatorId}`,
          details: await this.#unconfirmOnRemoval(trx, by, operatorId),
        });
        return true;
      }),
    );
    return { operator_id: operatorId, removed };
  }

  /**
   * A factor removed by someone else clears the account's confirmation (attack round 11, F2): the
   * first factor it enrols next is one nobody vouched for, so it counts as a second person again
   * only once another confirmed decider confirms it, as after a replacement (a hand-over).
   * `set_up_by` stays: the remover handed nothing. Its own removal (with a code) changes nothing.
   * Answers the removal record's details.
   */
  async #unconfirmOnRemoval(
    trx: Transaction<Database>,
    by: Operator,
    operatorId: string,
  ): Promise<Record<string, unknown>> {
    if (!isBootstrap(by) && by.id === operatorId) return {};
    const row = await trx
      .selectFrom('operators')
      .select('confirmed_by')
      .where('id', '=', operatorId)
      .executeTakeFirst();
    if (!row || row.confirmed_by === null) return {};
    await trx
      .updateTable('operators')
      .set({ confirmed_by: null, confirmed_at: null })
      .where('id', '=', operatorId)
      .execute();
    return { confirmation_cleared: true, was_confirmed_by: row.confirmed_by };
  }

  async enrolled(operatorId: string): Promise<boolean> {
    const row = await this.#db
      .selectFrom('operator_second_factors')
      .select('operator_id')
      .where('operator_id', '=', operatorId)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The port's check (logins, security reviews): resolves for a valid, unused code. */
  async verify(operatorId: string, code: string): Promise<void> {
    await this.check(operatorId, code, 'second_factor.totp');
  }

  /**
   * Checks `code` against the operator's current secret, read from the database now, and claims
   * the step it matched; returns that step (the desks store it with the decision). Throws
   * FORBIDDEN when nothing is enrolled (no attempt is counted: there is nothing to guess),
   * SECOND_FACTOR_LOCKED in backoff or lockout, INPUT_INVALID (rule `rule`) for a wrong,
   * malformed or used code. Must not run inside a transaction of the same store.
   */
  async check(operatorId: string, code: unknown, rule: string): Promise<number> {
    const row = await this.#db
      .selectFrom('operator_second_factors')
      .selectAll()
      .where('operator_id', '=', operatorId)
      .executeTakeFirst();
    if (!row) {
      throw new ToolgateError(
        'FORBIDDEN',
        `operator ${operatorId} has no second factor enrolled; an admin enrols one (toolgate approvers enroll ${operatorId})`,
        {},
      );
    }
    const version = Number(row.version);
    const sealed: SealedSecret = {
      keyId: row.key_id,
      nonce: row.nonce,
      ciphertext: row.ciphertext,
      tag: row.tag,
    };
    const secret = this.#open(operatorId, version, sealed);
    // The newest step used anywhere: this row's, and decisions recorded under the operator's actor.
    const steps = [
      row.last_step === null ? undefined : Number(row.last_step),
      // (`operator:<id>`, what operatorActor records for a non-bootstrap operator).
      await lastTotpStep(this.#db, `operator:${operatorId}`),
    ].filter((s): s is number => s !== undefined);
    const lastUsedStep = steps.length > 0 ? Math.max(...steps) : undefined;
    const step = await this.#guard.verify(operatorId, secret, code, rule, { lastUsedStep });
    // Claim the step: of two replicas accepting one code at once, one update matches.
    const claimed = await this.#db
      .updateTable('operator_second_factors')
      .set({ last_step: step })
      .where('operator_id', '=', operatorId)
      .where('version', '=', version)
      .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)]))
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) {
      throw new ToolgateError('INPUT_INVALID', 'second factor replayed', {
        problems: [problem('/totp', 'second factor replayed', rule)],
      });
    }
    return step;
  }

  /** Attempts, backoff and lockout of `operatorId`'s codes. */
  state(operatorId: string): Promise<SecondFactorState> {
    return this.#guard.state(operatorId);
  }

  /**
   * The admin's way out of a lockout; audited. Never one's own (attack round 11, F8): clearing
   * one's own failures resets the guessing guard and its alert, so it is FORBIDDEN and recorded as
   * `operator.four_eyes_refused` (`own_unlock`); another admin does it. Nor, once the first admin
   * is set up, the bootstrap token's of an account holding `approver` or `admin` (attack round 12,
   * N3: a stolen personal token would guess codes and never reach the lockout), refused and
   * recorded as `bootstrap_after_setup`, as the token's other second-factor acts.
   */
  unlock(operatorId: string, actor: Actor): Promise<SecondFactorState> {
    return auditRefusalAs(this.#db, actor, this.#clock, 'unlock_second_factor', async () => {
      if (actor.id === `operator:${operatorId}`) {
        throw new FourEyesRefused(
          'an admin cannot unlock their own second factor; another admin does it',
          operatorId,
          'own_unlock',
        );
      }
      if (actor.id === BOOTSTRAP_ACTOR_ID && (await this.#decides(operatorId))) {
        await refuseBootstrapAfterSetup(
          this.#db,
          BOOTSTRAP_OPERATOR,
          operatorId,
          'unlock the second factor of an approver or an admin',
        );
      }
      return this.#guard.unlock(operatorId, actor);
    });
  }

  /** Whether account `operatorId` holds `approver` or `admin` now. */
  async #decides(operatorId: string): Promise<boolean> {
    const row = await this.#db
      .selectFrom('operators')
      .select('roles')
      .where('id', '=', operatorId)
      .executeTakeFirst();
    const roles: unknown = row ? JSON.parse(row.roles) : [];
    return Array.isArray(roles) && (roles.includes('approver') || roles.includes('admin'));
  }

  /** The plaintext secret; a row that fails authentication is refused, never used. */
  #open(operatorId: string, version: number, sealed: SealedSecret): string {
    const binding = bindingOf(operatorId, version);
    try {
      return openSecret(this.#masterKey(), binding, sealed);
    } catch (err) {
      if (!isToolgateError(err) || err.code !== 'SECRET_UNREADABLE') throw err;
      throw new ToolgateError(
        'SECRET_UNREADABLE',
        `the second factor of operator ${operatorId} failed authentication (altered or copied from another operator); an admin enrols it again`,
        { ...binding, version },
      );
    }
  }

  #masterKey(): MasterKey {
    this.#key ??= this.#loadKey();
    return this.#key;
  }

  /** Who may manage second factors, and for whom: checked before anything is read or written. */
  async #mayManage(
    by: Operator,
    operatorId: string,
    what: 'enrol' | 'remove',
    via: Actor['via'],
    proof: OwnFactorProof,
    mustExist = true,
  ): Promise<void> {
    if (!isBootstrap(by) && !hasRole(by, 'admin')) {
      throw new ToolgateError(
        'FORBIDDEN',
        `only an admin may ${what} a second factor; ${by.id} is not one`,
        {},
      );
    }
    if (!operatorIdRe.test(operatorId) || operatorId === BOOTSTRAP_ACTOR_ID) {
      throw new ToolgateError(
        'INPUT_INVALID',
        `a second factor belongs to a named operator: ids are 1–100 letters, digits, _ . @ + - (and not ${BOOTSTRAP_ACTOR_ID})`,
        { problems: [problem('/operator', 'not an operator id', 'second_factor.operator')] },
      );
    }
    if (mustExist && this.#operatorExists && !(await this.#operatorExists(operatorId))) {
      throw new ToolgateError('NOT_FOUND', `no operator ${operatorId}`, {});
    }
    if (!isBootstrap(by) && by.id === operatorId && (await this.enrolled(operatorId))) {
      await this.#proveOwn(by, operatorId, what, via, proof.totp);
      return;
    }
    // Never a single sign-on account's factor, latch or no latch (attack round 11, F1). Audited.
    if (what === 'enrol') {
      await auditRefusal(this.#db, by, via, this.#clock, 'enrol_second_factor', () =>
        refuseBootstrapOnSso(this.#db, by, operatorId, 'enrol or replace the second factor of'),
      );
    }
    // A second factor arms an account to decide: the shared bootstrap secret stops doing it once
    // the first admin is set up, but for the genesis admin's own (local) first factor. Audited.
    if (isBootstrap(by) && what === 'enrol' && (await this.#genesisFirstFactor(operatorId))) return;
    await auditRefusal(this.#db, by, via, this.#clock, `${what}_second_factor`, () =>
      refuseBootstrapAfterSetup(this.#db, by, operatorId, `${what} a second factor`),
    );
  }

  /**
   * One's own existing factor is replaced or removed only with a current code of it, so a personal
   * token alone cannot swap the factor that the step-up of every decision checks (attack round 10,
   * F1). No code is a four-eyes refusal, audited `own_second_factor` (a code of other than six digits
   * is malformed input, INPUT_INVALID); a wrong
   * code is a failure the guard counts and audits like any other. Lost the authenticator? Another
   * admin re-enrols or removes it (a hand-over).
   */
  async #proveOwn(
    by: Operator,
    operatorId: string,
    what: 'enrol' | 'remove',
    via: Actor['via'],
    code: unknown,
  ): Promise<void> {
    const act = what === 'enrol' ? 'enrol_second_factor' : 'remove_second_factor';
    // A code that is not exactly the code's digits (a number, 7 digits) is malformed input, not a
    // missing code (attack round 11, F9; round 12, N5); no attempt is spent on it.
    if (code !== undefined && !isTotpCodeShaped(code)) {
      throw new ToolgateError(
        'INPUT_INVALID',
        `the second-factor code must be a string of exactly ${TOTP_DIGITS} digits`,
        {
          problems: [
            problem('/totp', `not a string of ${TOTP_DIGITS} digits`, 'second_factor.totp'),
          ],
        },
      );
    }
    if (!isTotpCodeShaped(code)) {
      await auditRefusal(this.#db, by, via, this.#clock, act, async () => {
        throw new FourEyesRefused(
          `replacing or removing your own second factor needs a current code of it ("totp"; CLI --totp); lost it? another admin re-enrols or removes it for you`,
          operatorId,
          'own_second_factor',
        );
      });
    }
    await this.check(operatorId, code, 'second_factor.own');
  }

  /**
   * Whether `operatorId` is the genesis admin (confirmed by the bootstrap token, whose secret it
   * holds: confirmation.ts) with no second factor yet, while the genesis is open. Arming another
   * admin first must not lock it out: that admin is not confirmed and may arm nobody, so the token
   * keeps the right to enrol this one factor (attack round 8, F12); never to replace it, nor to
   * enrol it again once it was removed (attack round 10, F3).
   */
  async #genesisFirstFactor(operatorId: string): Promise<boolean> {
    return (
      (await genesisOpen(this.#db)) &&
      (await isGenesisAdmin(this.#db, operatorId)) &&
      !(await this.enrolled(operatorId)) &&
      !(await this.#everEnrolled(operatorId))
    );
  }

  /** Whether `operatorId` has ever had a second factor (its enrolments are in the audit log). */
  async #everEnrolled(operatorId: string): Promise<boolean> {
    const event = await this.#db
      .selectFrom('events')
      .select('seq')
      .where('action', 'in', ['second_factor.enrolled', 'second_factor.replaced'])
      .where('subject', '=', `operator:${operatorId}`)
      .executeTakeFirst();
    return event !== undefined;
  }
}
