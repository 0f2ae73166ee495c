/**
 * @module Idempotency records: a retry with the same key never runs twice. A finished call under a
 * key is replayed; the same key with other arguments, or while its call has no result, is refused.
 * The only code that reads or writes the `idempotency` table.
 */
import type { Kysely } from 'kysely';
import { type Clock, systemClock, ToolgateError } from '../core/index.js';
import type { Database } from '../store/index.js';

/** Starts a stored result that carries its trust label (an ASCII record separator). */
const LABELLED = '\u001e';

/** How long an idempotency key answers with its first result (and refuses other arguments). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

const IDEMPOTENCY_KEY = /^[A-Za-z0-9_.:-]{1,128}$/;

/** Whether a caller's key has the allowed form (checked before it is scoped or stored). */
export function isIdempotencyKey(key: string): boolean {
  return IDEMPOTENCY_KEY.test(key);
}

export type IdempotencyOutcome =
  | { readonly kind: 'claimed' }
  | {
      readonly kind: 'replay';
      readonly callId: string;
      readonly output: unknown;
      /** The trust label the result carried when it was first answered, if it had one. */
      readonly trust?: unknown;
    }
  | { readonly kind: 'conflict'; readonly rule: string; readonly message: string };

const CLAIMED: IdempotencyOutcome = { kind: 'claimed' };

export class IdempotencyStore {
  readonly #db: Kysely<Database>;
  readonly #clock: Clock;

  constructor(db: Kysely<Database>, clock: Clock = systemClock) {
    this.#db = db;
    this.#clock = clock;
  }

  /** A finished call under this key (replay), a conflict, or nothing yet (`claimed` = free). */
  async lookup(key: string, argsHash: string): Promise<IdempotencyOutcome> {
    const row = await this.#db
      .selectFrom('idempotency')
      .selectAll()
      .where('key', '=', key)
      .executeTakeFirst();
    return row && !this.#expired(row) ? judgeIdempotency(row, argsHash) : CLAIMED;
  }

  /** A key past IDEMPOTENCY_TTL_MS is free again, swept or not. */
  #expired(row: { created_at: string }): boolean {
    return Date.parse(row.created_at) < this.#clock().getTime() - IDEMPOTENCY_TTL_MS;
  }

  /** Takes the key for this call, or says what the call already under it means for this one. */
  async claim(
    key: string,
    argsHash: string,
    callId: string,
    now: Date,
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
        created_at: now.toISOString(),
      })
      .onConflict((oc) => oc.column('key').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return CLAIMED;
    const row = await this.#db
      .selectFrom('idempotency')
      .selectAll()
      .where('key', '=', key)
      .executeTakeFirst();
    if (!row) throw new ToolgateError('INTERNAL', 'idempotency record vanished', {});
    return judgeIdempotency(row, argsHash);
  }

  /** Stores a finished call's result under its key: later retries are answered with it. */
  async storeResult(key: string, output: unknown, trust?: unknown): Promise<void> {
    await this.#db
      .updateTable('idempotency')
      .set({
        // A labelled result keeps its label, so a replay carries it too: stored behind a
        // separator no JSON text begins with (rows stored before hold the output alone).
        result:
          trust === undefined
            ? JSON.stringify(output)
            : `${LABELLED}${JSON.stringify({ output, trust })}`,
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

/** What an existing idempotency record means for a call with these arguments. */
function judgeIdempotency(
  row: { args_hash: string; call_id: string; result: string | null },
  argsHash: string,
): Exclude<IdempotencyOutcome, { kind: 'claimed' }> {
  if (row.args_hash !== argsHash) {
    return {
      kind: 'conflict',
      rule: 'idempotency.arguments_differ',
      message: 'this idempotency key was used with other arguments',
    };
  }
  if (row.result === null) {
    return {
      kind: 'conflict',
      rule: 'idempotency.in_progress',
      message: 'a call with this idempotency key is still running or failed; use a new key',
    };
  }
  if (row.result.startsWith(LABELLED)) {
    const stored = JSON.parse(row.result.slice(LABELLED.length)) as {
      output: unknown;
      trust: unknown;
    };
    return { kind: 'replay', callId: row.call_id, output: stored.output, trust: stored.trust };
  }
  return { kind: 'replay', callId: row.call_id, output: JSON.parse(row.result) as unknown };
}
