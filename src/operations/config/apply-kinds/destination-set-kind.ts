/**
 * @module `apply -f` of DestinationSet documents (C18, docs/configuration.md): a set created or
 * made what its document declares through the destination sets' own writes (the checks of
 * `destination-sets create` and `add`), and its prune. A set no longer declared is deleted only
 * when no live tool version's `destinations` rule names it: a rule naming a missing set refuses
 * every call of its tool, so such a set is kept and reported as drift with the tools that name it.
 */
import type { Transaction } from 'kysely';
import type { Actor } from '../../../core/index.js';
import {
  effectiveLifecycleOf,
  type LifecycleState,
  type ToolDefinition,
} from '../../../domain/catalog/index.js';
import type { DestinationSetDocument, DestinationSets } from '../../../domain/policy/index.js';
import type { Database } from '../../../records/store/index.js';
import {
  type ApplyChange,
  actionOf,
  type ConfigProblem,
  type IndexedDocument,
  type KindContext,
  type KindOutcome,
} from '../apply-types.js';
import { refusalProblems } from '../config-problems.js';
import type { PruneOutcome } from './prune-outcome.js';

export async function applyDestinationSets(
  { ctx, actor }: KindContext,
  docs: readonly IndexedDocument[],
  sets: DestinationSets,
): Promise<KindOutcome> {
  const changes: ApplyChange[] = [];
  const problems: ConfigProblem[] = [];
  for (const { index, doc } of docs) {
    const spec = doc.spec as DestinationSetDocument;
    try {
      const { outcome, said } = await sets.saveIn(ctx.trx, spec, actor);
      changes.push({
        document: index,
        kind: 'DestinationSet',
        subject: `destination set ${spec.name}`,
        action: actionOf(outcome),
        summary:
          outcome === 'unchanged'
            ? 'unchanged'
            : outcome === 'created'
              ? said.join(', ')
              : `updated: ${said.join(', ')}`,
      });
    } catch (err) {
      problems.push(...refusalProblems(err, index, 'DestinationSet'));
    }
  }
  return { changes, problems };
}

/** How many referring tool versions a drift line names before "and N more". */
const NAMED_REFERENCES = 5;

/**
 * The tool versions, not retired (now), whose `destinations` rules name set `name`: read inside
 * the apply's transaction, so a tool the same file registers or retires counts as it will be.
 */
export async function setReferences(
  trx: Transaction<Database>,
  name: string,
  now: Date,
): Promise<string[]> {
  const rows = await trx
    .selectFrom('tool_versions')
    .select(['tool_id', 'version', 'lifecycle', 'retire_at', 'definition'])
    .where('lifecycle', '!=', 'retired')
    .where('definition', 'like', '%"sets"%')
    .orderBy('tool_id')
    .orderBy('version')
    .execute();
  return rows
    .filter(
      (r) =>
        effectiveLifecycleOf(
          { lifecycle: r.lifecycle as LifecycleState, retire_at: r.retire_at },
          now,
        ) !== 'retired' &&
        ((JSON.parse(r.definition) as ToolDefinition).destinations ?? []).some((rule) =>
          (rule.allow.sets ?? []).includes(name),
        ),
    )
    .map((r) => `${r.tool_id}@${r.version}`);
}

/**
 * Why `apply --prune` keeps a set no longer declared (the whole drift line), or null when it
 * would delete it: a live tool version's rule still names it (`retiring` aside). Reads only: a plan without
 * `--prune` says the same (attack round 22, Y3).
 */
export async function destinationSetKept(
  trx: Transaction<Database>,
  name: string,
  /** Tool versions (`id@version`) that will be retired by then: they name it no longer. */
  retiring: ReadonlySet<string> = new Set(),
): Promise<string | null> {
  const refs = (await setReferences(trx, name, new Date())).filter((r) => !retiring.has(r));
  if (refs.length === 0) return null;
  const named = refs.slice(0, NAMED_REFERENCES).join(', ');
  const more = refs.length > NAMED_REFERENCES ? ` and ${refs.length - NAMED_REFERENCES} more` : '';
  return `no longer declared: kept, still named by tool ${named}${more} (a rule naming a missing set refuses every call); retire those versions or change their rules, then prune again`;
}

/** `apply --prune` of a set no longer declared: deleted, or kept while a live tool names it. */
export async function pruneDestinationSet(
  trx: Transaction<Database>,
  sets: DestinationSets,
  name: string,
  actor: Actor,
  reason: string,
): Promise<PruneOutcome> {
  const kept = await destinationSetKept(trx, name);
  if (kept !== null) return { kept: true, summary: kept };
  const gone = await sets.deleteIn(trx, name, actor, reason);
  return { summary: gone ? `deleted (${gone.members} members)` : 'gone' };
}
