/**
 * @module Bounded rate of local logins per account. Every attempt on an existing account is taken
 * from its row in the shared database by one conditional update before anything is checked (a
 * crash mid-check leaves a failure, never a free guess): after a failure the next attempt waits
 * (1 s, doubling, at most 5 min) and ten failures in a row lock the account for 15 minutes. An
 * attempt refused by the limit gets the same answer as a wrong password, so the limit does not
 * reveal which ids exist either.
 */
import { type Kysely, sql } from 'kysely';
import { type Clock, systemActor } from '../../core/index.js';
import { appendEvent, type Database } from '../../records/store/index.js';

export interface LoginLimits {
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly lockAfter: number;
  readonly lockMs: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = {
  baseDelayMs: 1000,
  maxDelayMs: 5 * 60_000,
  lockAfter: 10,
  lockMs: 15 * 60_000,
};

const ACTOR = systemActor('operator-login');

export class LoginGuard {
  readonly #db: Kysely<Database>;
  readonly #clock: Clock;
  readonly #limits: LoginLimits;

  constructor(db: Kysely<Database>, clock: Clock, limits: Partial<LoginLimits> = {}) {
    this.#db = db;
    this.#clock = clock;
    this.#limits = { ...DEFAULT_LOGIN_LIMITS, ...limits };
  }

  /** Takes one attempt for an existing account; false when the limit refuses it (audited). */
  async take(operatorId: string): Promise<boolean> {
    const now = this.#clock();
    const nowMs = now.getTime();
    await this.#db
      .insertInto('operator_login_attempts')
      .values({
        operator_id: operatorId,
        failures: 0,
        next_attempt_ms: 0,
        locked_until_ms: 0,
        updated_at: now.toISOString(),
      })
      .onConflict((oc) => oc.column('operator_id').doNothing())
      .execute();
    const taken = await this.#db
      .updateTable('operator_login_attempts')
      .set({
        failures: sql`failures + 1`,
        next_attempt_ms: nowMs + this.#limits.baseDelayMs,
        updated_at: now.toISOString(),
      })
      .where('operator_id', '=', operatorId)
      .where('next_attempt_ms', '<=', nowMs)
      .where('locked_until_ms', '<=', nowMs)
      .returning('failures')
      .executeTakeFirst();
    if (!taken) {
      await appendEvent(this.#db, ACTOR, now, {
        action: 'operator.login_refused',
        subject: `operator:${operatorId}`,
        details: { reason: 'rate' },
      });
      return false;
    }
    return true;
  }

  /** The attempt succeeded: the count starts over. */
  async succeeded(operatorId: string): Promise<void> {
    await this.#db
      .updateTable('operator_login_attempts')
      .set({
        failures: 0,
        next_attempt_ms: 0,
        locked_until_ms: 0,
        updated_at: this.#clock().toISOString(),
      })
      .where('operator_id', '=', operatorId)
      .execute();
  }

  /** The attempt failed (`reason` goes to the audit record only, never to the caller). */
  async failed(operatorId: string, reason: string): Promise<void> {
    const now = this.#clock();
    const nowMs = now.getTime();
    const row = await this.#db
      .selectFrom('operator_login_attempts')
      .select('failures')
      .where('operator_id', '=', operatorId)
      .executeTakeFirst();
    const failures = Number(row?.failures ?? 1);
    const delay = Math.min(
      this.#limits.baseDelayMs * 2 ** Math.min(failures - 1, 30),
      this.#limits.maxDelayMs,
    );
    const locked = failures >= this.#limits.lockAfter;
    await this.#db
      .updateTable('operator_login_attempts')
      .set({
        next_attempt_ms: nowMs + delay,
        ...(locked ? { locked_until_ms: nowMs + this.#limits.lockMs } : {}),
        updated_at: now.toISOString(),
      })
      .where('operator_id', '=', operatorId)
      .execute();
    await appendEvent(this.#db, ACTOR, now, {
      action: locked ? 'operator.login_locked' : 'operator.login_failed',
      subject: `operator:${operatorId}`,
      details: { reason, failures },
    });
  }
}
