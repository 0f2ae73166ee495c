/**
 * @module Destination-like literals first seen in untrusted results, by hash (the table of
 * migration 0026), and the marks of instruction-like text, each kept under two scopes: the run
 * (every session that joins it) and the (agent, user) principal over a window, so that a new
 * session or run id of the same agent for the same user does not forget what its attacker wrote.
 * A run's rows keep their first sighting (insert-or-ignore); a principal's row is renewed once it
 * is older than the window. Looked up for one call's candidates in one query on the (scope, hash)
 * key. The `run_id` column holds either scope: a principal scope is a JSON array, which no run id
 * can spell (RUN_ID_PATTERN starts with a letter or digit).
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../records/store/index.js';

/** One literal seen in one result: the hash of `kind:normalised value` and its kind. */
export interface SeenLiteral {
  readonly hash: string;
  readonly kind: string;
}

/** Where a literal first entered the run or the principal's window. */
export interface LiteralSighting {
  readonly hash: string;
  readonly kind: string;
  readonly tool_id: string;
  readonly call_id: string;
  /** ISO 8601 UTC. */
  readonly first_seen_at: string;
}

/** Where a look-up reads: the run, and the principal's rows no older than `since`. */
export interface LiteralScopes {
  readonly runId: string;
  readonly principal: string;
  readonly since: Date;
}

/** Kind of the row that says a result held more literals than were recorded. */
export const UNRECORDED_KIND = 'unrecorded';
/** Kind of the rows that say instruction-like text came from a source (one row per tool). */
export const INJECTION_KIND = 'injection';
/** Injection marks a look-up reads at most, oldest first. */
const INJECTION_SOURCES_MAX = 64;
export const UNRECORDED_HASH = markHash(UNRECORDED_KIND, '');

function markHash(kind: string, value: string): string {
  return createHash('sha256').update(`${kind}:${value}`).digest('hex');
}

/** The scope of one (agent, user) principal; `null`: sessions acting for nobody. */
export function principalScope(agentId: string, userId: string | null): string {
  return JSON.stringify(['agent_user', agentId, userId]);
}

/** Rows per insert statement: SQLite allows 32766 variables, six a row. */
const INSERT_BATCH = 200;

export async function recordRunLiterals(
  db: Kysely<Database>,
  sighting: {
    runId: string;
    principal: string;
    since: Date;
    toolId: string;
    callId: string;
    at: Date;
  },
  literals: readonly SeenLiteral[],
): Promise<void> {
  const at = sighting.at.toISOString();
  const since = sighting.since.toISOString();
  for (let i = 0; i < literals.length; i += INSERT_BATCH) {
    const batch = literals.slice(i, i + INSERT_BATCH);
    const rows = (scope: string) =>
      batch.map((l) => ({
        run_id: scope,
        hash: l.hash,
        kind: l.kind,
        tool_id: sighting.toolId,
        call_id: sighting.callId,
        first_seen_at: at,
      }));
    await db
      .insertInto('destination_literals')
      .values(rows(sighting.runId))
      .onConflict((oc) => oc.columns(['run_id', 'hash']).doNothing())
      .execute();
    // The principal's row is renewed once it has left the window: seen again, it counts again.
    await db
      .insertInto('destination_literals')
      .values(rows(sighting.principal))
      .onConflict((oc) =>
        oc
          .columns(['run_id', 'hash'])
          .doUpdateSet((eb) => ({
            kind: eb.ref('excluded.kind'),
            tool_id: eb.ref('excluded.tool_id'),
            call_id: eb.ref('excluded.call_id'),
            first_seen_at: eb.ref('excluded.first_seen_at'),
          }))
          .where('destination_literals.first_seen_at', '<', since),
      )
      .execute();
  }
}

/** Records that instruction-like text came from this tool's result, for the run and principal. */
export function recordInjectionMark(
  db: Kysely<Database>,
  sighting: {
    runId: string;
    principal: string;
    since: Date;
    toolId: string;
    callId: string;
    at: Date;
  },
): Promise<void> {
  return recordRunLiterals(db, sighting, [
    { kind: INJECTION_KIND, hash: markHash(INJECTION_KIND, sighting.toolId) },
  ]);
}

function inScopes(db: Kysely<Database>, scopes: LiteralScopes) {
  return db
    .selectFrom('destination_literals')
    .select(['hash', 'kind', 'tool_id', 'call_id', 'first_seen_at'])
    .where((eb) =>
      eb.or([
        eb('run_id', '=', scopes.runId),
        eb.and([
          eb('run_id', '=', scopes.principal),
          eb('first_seen_at', '>=', scopes.since.toISOString()),
        ]),
      ]),
    );
}

/** Earliest sighting of each hash first. */
function firstOfEach(rows: readonly LiteralSighting[]): LiteralSighting[] {
  const out = new Map<string, LiteralSighting>();
  for (const r of rows) if (!out.has(r.hash)) out.set(r.hash, r);
  return [...out.values()];
}

/** Which of `hashes` the run or the principal's window saw in an untrusted result, oldest first. */
export async function runLiteralSightings(
  db: Kysely<Database>,
  scopes: LiteralScopes,
  hashes: readonly string[],
): Promise<LiteralSighting[]> {
  if (hashes.length === 0) return [];
  const rows = await inScopes(db, scopes)
    .where('hash', 'in', [...hashes])
    .orderBy('first_seen_at')
    .orderBy('hash')
    .execute();
  return firstOfEach(rows);
}

/**
 * What a state-changing call's look-up needs, in one statement (one read, not two, per call):
 * which of `hashes` the scopes saw (as runLiteralSightings) and, when `injection`, the tools
 * whose results brought instruction-like text into them (as injectionSources).
 */
export async function runLiteralLookUp(
  db: Kysely<Database>,
  scopes: LiteralScopes,
  hashes: readonly string[],
  injection: boolean,
): Promise<{ sightings: LiteralSighting[]; injectionSources: string[] }> {
  if (!injection)
    return { sightings: await runLiteralSightings(db, scopes, hashes), injectionSources: [] };
  const wanted = new Set(hashes);
  const rows = await inScopes(db, scopes)
    .where((eb) =>
      hashes.length === 0
        ? eb('kind', '=', INJECTION_KIND)
        : eb.or([eb('kind', '=', INJECTION_KIND), eb('hash', 'in', [...hashes])]),
    )
    .orderBy('first_seen_at')
    .orderBy('hash')
    .execute();
  const marks = rows.filter((r) => r.kind === INJECTION_KIND).slice(0, INJECTION_SOURCES_MAX);
  return {
    sightings: firstOfEach(rows.filter((r) => wanted.has(r.hash))),
    injectionSources: [...new Set(marks.map((r) => r.tool_id))],
  };
}

/** The oldest destination sighting of the scopes (any value), or undefined when there is none. */
export function anyLiteralSighting(
  db: Kysely<Database>,
  scopes: LiteralScopes,
): Promise<LiteralSighting | undefined> {
  return inScopes(db, scopes)
    .where('kind', '<>', INJECTION_KIND)
    .orderBy('first_seen_at')
    .orderBy('hash')
    .limit(1)
    .executeTakeFirst();
}

/** The tools whose results brought instruction-like text into the scopes, oldest first. */
export async function injectionSources(
  db: Kysely<Database>,
  scopes: LiteralScopes,
): Promise<string[]> {
  const rows = await inScopes(db, scopes)
    .where('kind', '=', INJECTION_KIND)
    .orderBy('first_seen_at')
    .limit(INJECTION_SOURCES_MAX)
    .execute();
  return [...new Set(rows.map((r) => r.tool_id))];
}

/** The longest excerpt of a flagged string kept for reviewers (characters). */
export const MAX_FLAGGED_EXCERPT = 280;
/** Flagged texts shown on one approval: the oldest first. */
const MAX_FLAGGED_SHOWN = 5;

/** What the scan flagged in one result, for reviewers (the table of migration 0046). */
export interface FlaggedResult {
  readonly tool_id: string;
  readonly call_id: string;
  readonly at: string;
  readonly rules: readonly string[];
  readonly excerpt: string | null;
}

/** Keeps what the scan flagged in one result (its first record wins). */
export async function recordInjectionText(
  db: Kysely<Database>,
  text: FlaggedResult,
): Promise<void> {
  await db
    .insertInto('injection_texts')
    .values({
      call_id: text.call_id,
      tool_id: text.tool_id,
      at: text.at,
      rules: JSON.stringify(text.rules.slice(0, 8)),
      excerpt: text.excerpt === null ? null : text.excerpt.slice(0, MAX_FLAGGED_EXCERPT),
    })
    .onConflict((oc) => oc.column('call_id').doNothing())
    .execute();
}

/**
 * The flagged results whose injection marks are in the scopes, oldest first, at most a few: where
 * the text that escalates a call came from and what it said. A mark without a kept text (recorded
 * before texts were kept) is still named, with no rules and no excerpt.
 */
export async function flaggedResults(
  db: Kysely<Database>,
  scopes: LiteralScopes,
): Promise<FlaggedResult[]> {
  const marks = await inScopes(db, scopes)
    .where('kind', '=', INJECTION_KIND)
    .orderBy('first_seen_at')
    .limit(MAX_FLAGGED_SHOWN)
    .execute();
  if (marks.length === 0) return [];
  const ids = [...new Set(marks.map((m) => m.call_id))];
  const texts = new Map(
    (await db.selectFrom('injection_texts').selectAll().where('call_id', 'in', ids).execute()).map(
      (t) => [t.call_id, t],
    ),
  );
  return ids.map((id) => {
    const mark = marks.find((m) => m.call_id === id);
    const t = texts.get(id);
    return {
      tool_id: t?.tool_id ?? mark?.tool_id ?? '',
      call_id: id,
      at: t?.at ?? mark?.first_seen_at ?? '',
      rules: t ? (JSON.parse(t.rules) as string[]) : [],
      excerpt: t?.excerpt ?? null,
    };
  });
}
