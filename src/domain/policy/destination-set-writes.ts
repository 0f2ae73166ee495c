/**
 * @module The writes of a destination set inside a caller's transaction (docs/policies.md "Live
 * sets"): created, declared as a whole by `apply -f` (its spec and, for an admin set, its member
 * list), or deleted by `apply --prune`. Each change is an event in the caller's transaction; every
 * check is the one REST and the CLI use (destination-set-spec.ts).
 */
import type { Transaction } from 'kysely';
import { type Actor, type Problem, problem, ToolgateError } from '../../core/index.js';
import { appendEvent, type Database, LOCK_CLASSES, lockKeyIn } from '../../records/store/index.js';
import type { DestinationRuleKind } from './destination-policy.js';
import {
  type DestinationSetDocument,
  type DestinationSetSpec,
  destinationSetProblems,
  normaliseMembers,
} from './destination-set-spec.js';

type Trx = Transaction<Database>;
const subject = (name: string) => `destination_set:${name}`;

/**
 * Takes each set's lock for the rest of `trx`, in one order (sorted), so that a set's members are
 * counted and changed by one transaction at a time on PostgreSQL too (attack round 22, Y15: the
 * member cap). Taken first in a transaction, before an event takes the audit chain's lock: `add`,
 * `remove` and a refresh do, and an apply takes its files' sets' before it writes anything.
 */
export async function lockSetsIn(trx: Trx, names: readonly string[]): Promise<void> {
  for (const name of [...new Set(names)].sort()) {
    await lockKeyIn(trx, LOCK_CLASSES.destinationSets, name);
  }
}

/** A new set's row and its `destination_set.created` event; a taken name is a unique violation. */
export async function insertSetIn(
  trx: Trx,
  spec: DestinationSetSpec,
  actor: Actor,
  now: Date,
): Promise<void> {
  const at = now.toISOString();
  await trx
    .insertInto('destination_sets')
    .values({
      name: spec.name,
      kind: spec.kind,
      source: spec.directory ? 'directory' : 'admin',
      directory: spec.directory ? JSON.stringify(spec.directory) : null,
      description: spec.description ?? '',
      created_at: at,
      created_by: actor.id,
      updated_at: at,
      refreshed_at: null,
    })
    .execute();
  await appendEvent(trx, actor, now, {
    action: 'destination_set.created',
    subject: subject(spec.name),
    details: { kind: spec.kind, ...(spec.directory ? { directory: spec.directory } : {}) },
  });
}

/** What a declared set's apply did: its outcome and, for people, what changed. */
export interface SetSaved {
  readonly outcome: 'created' | 'updated' | 'unchanged';
  readonly said: readonly string[];
}

function invalid(problems: Problem[]): ToolgateError<'INPUT_INVALID'> {
  return new ToolgateError('INPUT_INVALID', 'invalid destination set', { problems });
}

/** The document's checks: the spec's, then its members' (normalised for the kind). */
function documentMembers(doc: DestinationSetDocument): string[] | null {
  const problems = destinationSetProblems(doc);
  if (problems.length > 0) throw invalid(problems);
  if (doc.members === undefined) return null;
  if (doc.directory !== undefined) {
    throw invalid([
      problem(
        '/members',
        'members of a directory set come from its tool',
        'destination_set.source',
      ),
    ]);
  }
  const members = normaliseMembers(doc.kind, doc.members, '/members');
  if (members.problems.length > 0) throw invalid(members.problems);
  return members.values;
}

/**
 * Makes the set what the document declares: created, or its description, directory and (when
 * the document lists them) members brought in line. A set's kind and source never change (its
 * members are normalised for its kind, and tools' rules were checked against it): such a document
 * is INPUT_INVALID, pointers relative to the spec.
 */
export async function saveSetIn(
  trx: Trx,
  doc: DestinationSetDocument,
  actor: Actor,
  now: Date,
): Promise<SetSaved> {
  const members = documentMembers(doc);
  // Held already when the apply took its sets' locks first, as it does.
  await lockSetsIn(trx, [doc.name]);
  const row = await trx
    .selectFrom('destination_sets')
    .selectAll()
    .where('name', '=', doc.name)
    .executeTakeFirst();
  if (!row) {
    await insertSetIn(trx, doc, actor, now);
    const added = members ? await syncMembersIn(trx, doc.name, members, actor, now) : null;
    const source = doc.directory
      ? `directory ${doc.directory.tool}@${doc.directory.version}`
      : 'admin';
    return {
      outcome: 'created',
      said: [`created (${doc.kind}, ${source}${added ? `, ${added.added.length} members` : ''})`],
    };
  }
  const problems: Problem[] = [];
  if (row.kind !== doc.kind) {
    problems.push(
      problem(
        '/kind',
        `set ${doc.name} is of kind ${row.kind}: a set's kind never changes (its members are normalised for it); declare a set under another name`,
        'destination_set.kind_change',
      ),
    );
  }
  if ((row.source === 'directory') !== (doc.directory !== undefined)) {
    problems.push(
      problem(
        '/directory',
        `set ${doc.name} is ${row.source === 'directory' ? 'supplied by a directory tool' : 'managed by admins'}: a set's source never changes; declare a set under another name`,
        'destination_set.source_change',
      ),
    );
  }
  if (problems.length > 0) throw invalid(problems);
  const said: string[] = [];
  const description = doc.description ?? '';
  const directory = doc.directory ? JSON.stringify(doc.directory) : null;
  if (row.description !== description || !sameJson(row.directory, directory)) {
    const details: Record<string, unknown> = {};
    if (row.description !== description) details.description = description;
    if (!sameJson(row.directory, directory)) details.directory = doc.directory ?? null;
    await trx
      .updateTable('destination_sets')
      .set({ description, directory, updated_at: now.toISOString() })
      .where('name', '=', doc.name)
      .execute();
    await appendEvent(trx, actor, now, {
      action: 'destination_set.updated',
      subject: subject(doc.name),
      details,
    });
    said.push(...Object.keys(details));
  }
  if (members) {
    const { added, removed } = await syncMembersIn(trx, doc.name, members, actor, now);
    if (added.length > 0) said.push(`+${added.length} members`);
    if (removed.length > 0) said.push(`-${removed.length} members`);
  }
  return { outcome: said.length > 0 ? 'updated' : 'unchanged', said };
}

function sameJson(a: string | null, b: string | null): boolean {
  if (a === null || b === null) return a === b;
  return JSON.stringify(sorted(JSON.parse(a))) === JSON.stringify(sorted(JSON.parse(b)));
}

function sorted(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .sort(([x], [y]) => x.localeCompare(y))
      .map(([k, v]) => [k, sorted(v)]),
  );
}

/**
 * Makes an admin set's members exactly `wanted` (already normalised): the missing added, the
 * others removed, each direction one event naming its values, as `destination-sets add/remove`.
 */
async function syncMembersIn(
  trx: Trx,
  name: string,
  wanted: readonly string[],
  actor: Actor,
  now: Date,
): Promise<{ added: string[]; removed: string[] }> {
  const at = now.toISOString();
  const stored = new Set(
    (
      await trx
        .selectFrom('destination_set_members')
        .select('value')
        .where('set_name', '=', name)
        .execute()
    ).map((r) => r.value),
  );
  const want = new Set(wanted);
  const added = [...want].filter((v) => !stored.has(v)).sort();
  const removed = [...stored].filter((v) => !want.has(v)).sort();
  for (let i = 0; i < added.length; i += 500) {
    await trx
      .insertInto('destination_set_members')
      .values(
        added
          .slice(i, i + 500)
          .map((value) => ({ set_name: name, value, added_at: at, added_by: actor.id })),
      )
      .execute();
  }
  for (let i = 0; i < removed.length; i += 500) {
    await trx
      .deleteFrom('destination_set_members')
      .where('set_name', '=', name)
      .where('value', 'in', removed.slice(i, i + 500))
      .execute();
  }
  for (const [values, action] of [
    [added, 'destination_set.members_added'],
    [removed, 'destination_set.members_removed'],
  ] as const) {
    if (values.length === 0) continue;
    await appendEvent(trx, actor, now, { action, subject: subject(name), details: { values } });
  }
  if (added.length + removed.length > 0) {
    await trx
      .updateTable('destination_sets')
      .set({ updated_at: at })
      .where('name', '=', name)
      .execute();
  }
  return { added, removed };
}

/**
 * Deletes a set and its members, one `destination_set.deleted` event naming the reason; false
 * when there is no such set. The caller has made sure no live rule names it: a rule naming a
 * missing set refuses every call (fail closed), which is safe but breaks the tool.
 */
export async function deleteSetIn(
  trx: Trx,
  name: string,
  actor: Actor,
  reason: string,
  now: Date,
): Promise<{ kind: DestinationRuleKind; members: number } | null> {
  const row = await trx
    .selectFrom('destination_sets')
    .select('kind')
    .where('name', '=', name)
    .executeTakeFirst();
  if (!row) return null;
  const gone = await trx
    .deleteFrom('destination_set_members')
    .where('set_name', '=', name)
    .execute();
  const members = gone.reduce((n, r) => n + Number(r.numDeletedRows), 0);
  await trx.deleteFrom('destination_sets').where('name', '=', name).execute();
  await appendEvent(trx, actor, now, {
    action: 'destination_set.deleted',
    subject: subject(name),
    details: { kind: row.kind, members, reason },
  });
  return { kind: row.kind as DestinationRuleKind, members };
}
