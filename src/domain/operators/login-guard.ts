/**
 * @module Bounded rate of local logins per account and peer. Every attempt on an existing account
 * is taken from its row in the shared database by one conditional update before anything is
 * checked (a crash mid-check leaves a failure, never a free guess): after a failure the next
 * attempt from that peer waits (1 s, doubling, at most 5 min) and ten failures in a row lock the
 * account for that peer for 15 minutes. The row is the account's and the peer's (the keyed hash of
 * its address), so a stranger who knows an operator id spends their own budget, never the owner's
 * (round 7, F3; invariant 10). An attempt without a peer (the REST step-up of an operator already
 * authenticated, the library) is the account's own row. An attempt refused by the limit gets the
 * same answer as a wrong password, so the limit does not reveal which ids exist either.
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
/** A refusal by the limit is recorded once per account, peer and minute; the rest are counted. */
const REFUSAL_WINDOW_MS = 60_000;
const REFUSALS_REMEMBERED = 10_000;

export class LoginGuard {
  readonly #db: Kysely<Database>;
  readonly #clock: Clock;
  readonly #limits: LoginLimits;
  /** Per row, while its refusals are sampled: until when, and how many were not recorded. */
  readonly #refused = new Map<string, { until: number; notRecorded: number }>();

  constructor(db: Kysely<Database>, clock: Clock, limits: Partial<LoginLimits> = {}) {
    this.#db = db;
    this.#clock = clock;
    this.#limits = { ...DEFAULT_LOGIN_LIMITS, ...limits };
  }

  /**
   * Takes one attempt for an existing account from `peer` (a keyed hash); false when the limit
   * refuses it (audited, the first refusal of each wait in full: a flood of refused attempts writes
   * one record per wait, not one per request).
   */
  async take(operatorId: string, peer?: string): Promise<boolean> {
    const key = rowKey(operatorId, peer);
    const now = this.#clock();
    const nowMs = now.getTime();
    await this.#db
      .insertInto('operator_login_attempts')
      .values({
        operator_id: key,
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
      .where('operator_id', '=', key)
      .where('next_attempt_ms', '<=', nowMs)
      .where('locked_until_ms', '<=', nowMs)
      .returning('failures')
      .executeTakeFirst();
    if (!taken) {
      const sampled = this.#refused.get(key);
      if (sampled && sampled.until > nowMs) {
        sampled.notRecorded += 1;
        return false;
      }
      this.#refused.delete(key);
      // Bounded memory: the oldest entry goes first (its next refusal is recorded in full).
      if (this.#refused.size >= REFUSALS_REMEMBERED) {
        const oldest = this.#refused.keys().next().value;
        if (oldest !== undefined) this.#refused.delete(oldest);
      }
      this.#refused.set(key, { until: nowMs + REFUSAL_WINDOW_MS, notRecorded: 0 });
      await appendEvent(this.#db, ACTOR, now, {
        action: 'operator.login_refused',
        subject: `operator:${operatorId}`,
        details: {
          reason: 'rate',
          ...(peer !== undefined ? { remote: peer } : {}),
          // Refusals of this account and peer in the minute before, counted, not recorded.
          not_recorded: sampled?.notRecorded ?? 0,
        },
      });
      return false;
    }
    return true;
  }

  /** The attempt succeeded: the count starts over. */
  async succeeded(operatorId: string, peer?: string): Promise<void> {
    await this.#db
      .updateTable('operator_login_attempts')
      .set({
        failures: 0,
        next_attempt_ms: 0,
        locked_until_ms: 0,
        updated_at: this.#clock().toISOString(),
      })
      .where('operator_id', '=', rowKey(operatorId, peer))
      .execute();
  }

  /** The attempt failed (`reason` goes to the audit record only, never to the caller). */
  async failed(operatorId: string, reason: string, peer?: string): Promise<void> {
    const key = rowKey(operatorId, peer);
    const now = this.#clock();
    const nowMs = now.getTime();
    const row = await this.#db
      .selectFrom('operator_login_attempts')
      .select('failures')
      .where('operator_id', '=', key)
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
      .where('operator_id', '=', key)
      .execute();
    await appendEvent(this.#db, ACTOR, now, {
      action: locked ? 'operator.login_locked' : 'operator.login_failed',
      subject: `operator:${operatorId}`,
      details: { reason, failures, ...(peer !== undefined ? { remote: peer } : {}) },
    });
  }
}

/**
 * The row of an account's attempts from one peer. Operator ids never hold a space
 * (OPERATOR_ID_PATTERN), so `id peer` cannot be another account's row.
 */
function rowKey(operatorId: string, peer: string | undefined): string {
  return peer === undefined ? operatorId : `${operatorId} ${peer}`;
}
