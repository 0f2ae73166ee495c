/**
 * @module Idempotency records: a retry with the same key never runs twice. A finished call under a
 * key is replayed — its result, or the failure it ended with; the same key with other arguments is
 * refused, and so is a retry while the first call has not ended (its outcome is not known yet: the
 * caller waits, or asks for the key's outcome; a new key would run the call again). A key is held
 * only by a call that runs: a claim whose call is then refused (a rate limit, a budget) or stops
 * before its tool starts is released. The only code that reads or writes the `idempotency` table.
 */
import type { Kysely } from 'kysely';
import { type Clock, type ErrorCode, systemClock, ToolgateError } from '../../core/index.js';
import type { Database } from '../../records/store/index.js';

/** How long an idempotency key answers with its first result (and refuses other arguments). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Added to a tool's wall time to give the moment by which a claimed call must have ended: the
 * checks between the claim and the run (limits, the durable pre record) and the result's own
 * checks and bookkeeping. Past it with no outcome stored, the gateway that ran it stopped.
 */
export const IDEMPOTENCY_GRACE_MS = 60_000;

const IDEMPOTENCY_KEY = /^[A-Za-z0-9_.:-]{1,128}$/;

/** Whether a caller's key has the allowed form (checked before it is scoped or stored). */
export function isIdempotencyKey(key: string): boolean {
  return IDEMPOTENCY_KEY.test(key);
}

/** How a call that ran ended in failure: replayed as the same denial. */
export interface IdempotencyFailure {
  readonly code: ErrorCode;
  readonly rule: string;
  readonly message: string;
}

export type IdempotencyOutcome =
  | { readonly kind: 'claimed' }
  | {
      readonly kind: 'replay';
      readonly callId: string;
      readonly output: unknown;
      /** The first answer's trust label (the gate's TrustLabel), null when it had none. */
      readonly trust: unknown;
    }
  | {
      readonly kind: 'replay_failure';
      readonly callId: string;
      readonly failure: IdempotencyFailure;
    }
  | { readonly kind: 'conflict'; readonly rule: string; readonly message: string };

/**
 * What a key's owner is told when asking for its outcome (`GET /v1/sessions/:id/idempotency/…`):
 * finished with a result, failed, still running within its time, or unknown — started, and past
 * the time by which it must have ended with no outcome stored (the gateway stopped while it ran;
 * it may have run). A key with no record is null, whoever asks.
 */
export type KeyOutcome =
  | {
      readonly state: 'succeeded';
      readonly callId: string;
      readonly output: unknown;
      readonly trust: unknown;
    }
  | { readonly state: 'failed'; readonly callId: string; readonly failure: IdempotencyFailure }
  | { readonly state: 'running'; readonly callId: string }
  | { readonly state: 'unknown'; readonly callId: string };

const CLAIMED: IdempotencyOutcome = { kind: 'claimed' };

interface Row {
  readonly args_hash: string;
  readonly call_id: string;
  readonly result: string | null;
  readonly failure: string | null;
  readonly trust: string | null;
  readonly created_at: string;
  readonly run_by: string | null;
}

export class IdempotencyStore {
  readonly #db: Kysely<Database>;
  readonly #clock: Clock;

  constructor(db: Kysely<Database>, clock: Clock = systemClock) {
    this.#db = db;
    this.#clock = clock;
  }

  /** A finished call under this key (replay), a conflict, or nothing yet (`claimed` = free). */
  async lookup(key: string, argsHash: string): Promise<IdempotencyOutcome> {
    const row = await this.#row(key);
    return row && !this.#expired(row) ? judgeIdempotency(row, argsHash, this.#clock()) : CLAIMED;
  }

  /** What the call under this key came to, for its owner; null when there is no live record. */
  async outcome(key: string): Promise<KeyOutcome | null> {
    const row = await this.#row(key);
    if (!row || this.#expired(row)) return null;
    if (row.result !== null)
      return {
        state: 'succeeded',
        callId: row.call_id,
        output: JSON.parse(row.result) as unknown,
        trust: trustOf(row),
      };
    if (row.failure !== null)
      return { state: 'failed', callId: row.call_id, failure: parseFailure(row.failure) };
    return overdue(row, this.#clock())
      ? { state: 'unknown', callId: row.call_id }
      : { state: 'running', callId: row.call_id };
  }

  async #row(key: string): Promise<Row | undefined> {
    return this.#db.selectFrom('idempotency').selectAll().where('key', '=', key).executeTakeFirst();
  }

  /** A key past IDEMPOTENCY_TTL_MS is free again, swept or not. */
  #expired(row: { created_at: string }): boolean {
    return Date.parse(row.created_at) < this.#clock().getTime() - IDEMPOTENCY_TTL_MS;
  }

  /**
   * Takes the key for this call, or says what the call already under it means for this one.
   * `runByMs` is how long the call may take once claimed (the tool's wall time); past it plus
   * IDEMPOTENCY_GRACE_MS an unfinished claim reads as outcome unknown.
   */
  async claim(
    key: string,
    argsHash: string,
    callId: string,
    now: Date,
    runByMs = 0,
  ): Promise<IdempotencyOutcome> {
    // An expired record under this key (not swept yet) gives way to the new call.
    await this.#db
      .deleteFrom('idempotency')
      .where('key', '=', key)
      .where('created_at', '<', new Date(now.getTime() - IDEMPOTENCY_TTL_MS).toISOString())
      .execute();
    const inserted = await this.#db
      .insertInto('idempotency')
      .values({
        key,
        args_hash: argsHash,
        call_id: callId,
        result: null,
        failure: null,
        trust: null,
        created_at: now.toISOString(),
        run_by: new Date(now.getTime() + runByMs + IDEMPOTENCY_GRACE_MS).toISOString(),
      })
      .onConflict((oc) => oc.column('key').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return CLAIMED;
    const row = await this.#row(key);
    if (!row) throw new ToolgateError('INTERNAL', 'idempotency record vanished', {});
    return judgeIdempotency(row, argsHash, now);
  }

  /**
   * Gives the key back: its call was refused after the claim, or stopped before its tool started,
   * so nothing ran under it. One conditional statement, and only this call's own unfinished
   * claim: a record another call holds, or one with an outcome, is never removed.
   */
  async release(key: string, callId: string): Promise<void> {
    await this.#db
      .deleteFrom('idempotency')
      .where('key', '=', key)
      .where('call_id', '=', callId)
      .where('result', 'is', null)
      .where('failure', 'is', null)
      .execute();
  }

  /**
   * Stores a finished call's result (and its trust label) under its key: later retries, and its
   * owner asking for the outcome, are answered with it.
   */
  async storeResult(key: string, output: unknown, trust?: unknown): Promise<void> {
    await this.#db
      .updateTable('idempotency')
      .set({
        result: JSON.stringify(output),
        trust: trust === undefined ? null : JSON.stringify(trust),
      })
      .where('key', '=', key)
      .execute();
  }

  /** Stores how a call that ran failed: later retries are answered with the same failure. */
  async storeFailure(key: string, failure: IdempotencyFailure): Promise<void> {
    await this.#db
      .updateTable('idempotency')
      .set({
        failure: JSON.stringify({
          code: failure.code,
          rule: failure.rule,
          message: failure.message,
        }),
      })
      .where('key', '=', key)
      .execute();
  }

  /** Removes keys older than IDEMPOTENCY_TTL_MS (a retry after that runs as a new call). */
  async sweep(now: Date): Promise<number> {
    const removed = await this.#db
      .deleteFrom('idempotency')
      .where('created_at', '<', new Date(now.getTime() - IDEMPOTENCY_TTL_MS).toISOString())
      .executeTakeFirst();
    return Number(removed.numDeletedRows);
  }
}

function trustOf(row: Row): unknown {
  return row.trust === null ? null : (JSON.parse(row.trust) as unknown);
}

function parseFailure(text: string): IdempotencyFailure {
  const f = JSON.parse(text) as { code: ErrorCode; rule: string; message: string };
  return { code: f.code, rule: f.rule, message: f.message };
}

/** An unfinished claim past the time its call must have ended by. */
function overdue(row: Row, now: Date): boolean {
  return row.run_by !== null && Date.parse(row.run_by) < now.getTime();
}

/** What an existing idempotency record means for a call with these arguments. */
function judgeIdempotency(
  row: Row,
  argsHash: string,
  now: Date,
): Exclude<IdempotencyOutcome, { kind: 'claimed' }> {
  if (row.args_hash !== argsHash) {
    return {
      kind: 'conflict',
      rule: 'idempotency.arguments_differ',
      message: 'this idempotency key was used with other arguments',
    };
  }
  if (row.result !== null)
    return {
      kind: 'replay',
      callId: row.call_id,
      output: JSON.parse(row.result) as unknown,
      trust: trustOf(row),
    };
  if (row.failure !== null)
    return { kind: 'replay_failure', callId: row.call_id, failure: parseFailure(row.failure) };
  // Never "use a new key": the first call may be running or may have run, and a new key would
  // run it a second time. The caller waits, or asks for the key's outcome.
  return overdue(row, now)
    ? {
        kind: 'conflict',
        rule: 'idempotency.outcome_unknown',
        message:
          'the call with this idempotency key was started and its outcome was not recorded (it may have run); do not send it again under a new key',
      }
    : {
        kind: 'conflict',
        rule: 'idempotency.in_progress',
        message:
          'the call with this idempotency key has not finished; retry later with the same key, or ask for its outcome (a new key would run it again)',
      };
}
