/**
 * @module Rate limit on approvers' TOTP codes. Three live codes in a million make an
 * unthrottled check guessable; here every attempt is taken from a per-approver row in the shared
 * database by one conditional update, so no two attempts (on any replica) are checked inside one
 * backoff interval. A wrong or reused code doubles the wait (1 s … 5 min); ten consecutive
 * failures lock the approver for 15 minutes; an admin can unlock. Everything is audited, and
 * repeated failures raise an alert. The row is counted before the code is checked: a crash
 * mid-check leaves a failure, never a free guess.
 */
import { type Kysely, sql } from 'kysely';
import {
  type Actor,
  type Clock,
  problem,
  systemActor,
  systemClock,
  ToolgateError,
} from '../../core/index.js';
import { appendEvent, type Database, lastTotpStep } from '../../records/store/index.js';
import { isTotpCodeShaped, verifyTotp } from './totp.js';

export interface SecondFactorLimits {
  /** Wait after the first failure; doubles with each further one. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** Consecutive failures that lock the approver. */
  readonly lockAfter: number;
  readonly lockMs: number;
  /** From this many consecutive failures on, each one raises an alert (a typo is not one). */
  readonly alertAfter: number;
}

export const DEFAULT_SECOND_FACTOR_LIMITS: SecondFactorLimits = {
  baseDelayMs: 1000,
  maxDelayMs: 5 * 60_000,
  lockAfter: 10,
  lockMs: 15 * 60_000,
  alertAfter: 3,
};

export interface SecondFactorState {
  readonly approver: string;
  readonly failures: number;
  /** ISO times; null when nothing is pending. */
  readonly next_attempt_at: string | null;
  readonly locked_until: string | null;
}

const ACTOR = systemActor('second-factor');

export class SecondFactorGuard {
  readonly #db: Kysely<Database>;
  readonly #clock: Clock;
  readonly #limits: SecondFactorLimits;

  constructor(
    db: Kysely<Database>,
    options: { clock?: Clock; limits?: Partial<SecondFactorLimits> } = {},
  ) {
    this.#db = db;
    this.#clock = options.clock ?? systemClock;
    this.#limits = { ...DEFAULT_SECOND_FACTOR_LIMITS, ...options.limits };
  }

  /**
   * Checks `code` for `approver` and returns the accepted step, which the caller stores with the
   * approval (the unique (approver, step) indexes make a racing reuse fail there). Throws
   * SECOND_FACTOR_LOCKED when no attempt may be made now, INPUT_INVALID (rule `rule`) for a wrong,
   * malformed or already used code. Must not run inside a transaction of the same store: the
   * failure has to be counted even though the approval is not made. `lastUsedStep`, when the
   * caller keeps it (an operator's enrolment does), replaces the look-up in the decisions tables.
   */
  async verify(
    approver: string,
    secret: string,
    code: unknown,
    rule: string,
    options: { readonly lastUsedStep?: number | undefined } = {},
  ): Promise<number> {
    const now = this.#clock();
    const nowMs = now.getTime();
    // Something that is not six digits cannot be a guess: refused without spending an attempt,
    // so a client bug (an empty field) never locks a person out.
    if (!isTotpCodeShaped(code)) {
      throw new ToolgateError('INPUT_INVALID', 'second factor malformed', {
        problems: [problem('/totp', 'second factor malformed', rule)],
      });
    }
    await this.#db
      .insertInto('totp_attempts')
      .values({
        approver_id: approver,
        failures: 0,
        next_attempt_ms: 0,
        locked_until_ms: 0,
        updated_at: now.toISOString(),
      })
      .onConflict((oc) => oc.column('approver_id').doNothing())
      .execute();
    // Take the attempt: only one caller gets a row back until the base delay has passed.
    const taken = await this.#db
      .updateTable('totp_attempts')
      .set({
        failures: sql`failures + 1`,
        next_attempt_ms: nowMs + this.#limits.baseDelayMs,
        updated_at: now.toISOString(),
      })
      .where('approver_id', '=', approver)
      .where('next_attempt_ms', '<=', nowMs)
      .where('locked_until_ms', '<=', nowMs)
      .returning('failures')
      .executeTakeFirst();
    if (!taken) throw await this.#refused(approver, now);
    const failures = Number(taken.failures);

    const lastUsed =
      'lastUsedStep' in options ? options.lastUsedStep : await lastTotpStep(this.#db, approver);
    const check = verifyTotp(secret, code, now, lastUsed);
    if (check.ok) {
      await this.#db
        .updateTable('totp_attempts')
        .set({ failures: 0, next_attempt_ms: 0, locked_until_ms: 0, updated_at: now.toISOString() })
        .where('approver_id', '=', approver)
        .execute();
      return check.step;
    }
    const delay = Math.min(
      this.#limits.baseDelayMs * 2 ** Math.min(failures - 1, 30),
      this.#limits.maxDelayMs,
    );
    const locked = failures >= this.#limits.lockAfter;
    const lockedUntil = locked ? nowMs + this.#limits.lockMs : 0;
    await this.#db
      .updateTable('totp_attempts')
      .set({
        next_attempt_ms: nowMs + delay,
        ...(locked ? { locked_until_ms: lockedUntil } : {}),
        updated_at: now.toISOString(),
      })
      .where('approver_id', '=', approver)
      .execute();
    await appendEvent(this.#db, ACTOR, now, {
      action: locked ? 'approver.totp_locked' : 'approver.totp_failed',
      subject: `approver:${approver}`,
      details: {
        reason: check.reason,
        failures,
        retry_after_seconds: Math.ceil((locked ? this.#limits.lockMs : delay) / 1000),
      },
    });
    if (failures >= this.#limits.alertAfter) {
      await appendEvent(this.#db, ACTOR, now, {
        action: 'alert.raised',
        subject: `approver:${approver}`,
        details: {
          detector: 'second_factor',
          message: locked
            ? `approver ${approver} locked after ${failures} failed second-factor codes`
            : `approver ${approver}: ${failures} failed second-factor codes in a row`,
          failures,
          locked,
        },
      });
    }
    throw new ToolgateError('INPUT_INVALID', `second factor ${check.reason}`, {
      problems: [problem('/totp', `second factor ${check.reason}`, rule)],
    });
  }

  /** The refusal of an attempt made too early, audited (it is someone trying codes). */
  async #refused(approver: string, now: Date): Promise<ToolgateError<'SECOND_FACTOR_LOCKED'>> {
    const row = await this.#db
      .selectFrom('totp_attempts')
      .selectAll()
      .where('approver_id', '=', approver)
      .executeTakeFirstOrThrow();
    const lockedUntil = Number(row.locked_until_ms);
    const reason = lockedUntil > now.getTime() ? 'locked' : 'backoff';
    const until = Math.max(lockedUntil, Number(row.next_attempt_ms));
    const retryAfterSeconds = Math.max(1, Math.ceil((until - now.getTime()) / 1000));
    await appendEvent(this.#db, ACTOR, now, {
      action: 'approver.totp_refused',
      subject: `approver:${approver}`,
      details: { reason, failures: Number(row.failures), retry_after_seconds: retryAfterSeconds },
    });
    return new ToolgateError(
      'SECOND_FACTOR_LOCKED',
      reason === 'locked'
        ? `approver ${approver} is locked after failed second-factor codes; retry in ${retryAfterSeconds} s or ask an admin to unlock`
        : `wait ${retryAfterSeconds} s before the next second-factor code for ${approver}`,
      { approver, reason, retryAfterSeconds, failures: Number(row.failures) },
    );
  }

  /** Admin way out of a lockout (or of someone else's guessing): clears the count, audited. */
  async unlock(approver: string, actor: Actor): Promise<SecondFactorState> {
    const now = this.#clock();
    const before = await this.state(approver);
    await this.#db
      .updateTable('totp_attempts')
      .set({ failures: 0, next_attempt_ms: 0, locked_until_ms: 0, updated_at: now.toISOString() })
      .where('approver_id', '=', approver)
      .execute();
    await appendEvent(this.#db, actor, now, {
      action: 'approver.totp_unlocked',
      subject: `approver:${approver}`,
      details: { failures: before.failures, was_locked: before.locked_until !== null },
    });
    return this.state(approver);
  }

  async state(approver: string): Promise<SecondFactorState> {
    const row = await this.#db
      .selectFrom('totp_attempts')
      .selectAll()
      .where('approver_id', '=', approver)
      .executeTakeFirst();
    const nowMs = this.#clock().getTime();
    const iso = (ms: number) => (ms > nowMs ? new Date(ms).toISOString() : null);
    return {
      approver,
      failures: Number(row?.failures ?? 0),
      next_attempt_at: iso(Number(row?.next_attempt_ms ?? 0)),
      locked_until: iso(Number(row?.locked_until_ms ?? 0)),
    };
  }
}
