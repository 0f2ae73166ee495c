/**
 * @module Destination-like literals a run first saw in untrusted results, by hash (the table of
 * migration 0026): recorded insert-or-ignore, so the first sighting is the one a reviewer is
 * shown, and looked up for one call's candidates in one query on the (run, hash) key.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../store/index.js';

/** One literal seen in one result: the hash of `kind:normalised value` and its kind. */
export interface SeenLiteral {
  readonly hash: string;
  readonly kind: string;
}

/** Where a literal first entered the run. */
export interface LiteralSighting {
  readonly hash: string;
  readonly kind: string;
  readonly tool_id: string;
  readonly call_id: string;
  /** ISO 8601 UTC. */
  readonly first_seen_at: string;
}

/** Rows per insert statement: SQLite allows 32766 variables, six a row. */
const INSERT_BATCH = 200;

export async function recordRunLiterals(
  db: Kysely<Database>,
  sighting: { runId: string; toolId: string; callId: string; at: Date },
  literals: readonly SeenLiteral[],
): Promise<void> {
  const at = sighting.at.toISOString();
  for (let i = 0; i < literals.length; i += INSERT_BATCH) {
    await db
      .insertInto('destination_literals')
      .values(
        literals.slice(i, i + INSERT_BATCH).map((l) => ({
          run_id: sighting.runId,
          hash: l.hash,
          kind: l.kind,
          tool_id: sighting.toolId,
          call_id: sighting.callId,
          first_seen_at: at,
        })),
      )
      .onConflict((oc) => oc.columns(['run_id', 'hash']).doNothing())
      .execute();
  }
}

/** Which of `hashes` the run saw first in an untrusted result, oldest sighting first. */
export async function runLiteralSightings(
  db: Kysely<Database>,
  runId: string,
  hashes: readonly string[],
): Promise<LiteralSighting[]> {
  if (hashes.length === 0) return [];
  return db
    .selectFrom('destination_literals')
    .select(['hash', 'kind', 'tool_id', 'call_id', 'first_seen_at'])
    .where('run_id', '=', runId)
    .where('hash', 'in', [...hashes])
    .orderBy('first_seen_at')
    .orderBy('hash')
    .execute();
}
