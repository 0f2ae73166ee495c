/**
 * @module At registration, a tool's destinations rules may name only destination sets that exist
 * (docs/architecture.md §3 step `policy`): one read for every set the definition names.
 */
import type { Transaction } from 'kysely';
import { problem, ToolgateError } from '../../core/index.js';
import type { Database } from '../../records/store/index.js';
import { describeProblems } from './describe-problems.js';
import type { ToolDefinition } from './tool-definition.js';

/**
 * A destinations rule naming a set that does not exist is an unverifiable claim: refused at
 * registration (docs/architecture.md §3 step `policy`), every such rule named.
 */
export async function checkDestinationSets(
  trx: Transaction<Database>,
  definition: ToolDefinition,
): Promise<void> {
  const named = (definition.destinations ?? []).flatMap((r, i) =>
    (r.allow.sets ?? []).map((set, j) => ({ set, pointer: `/destinations/${i}/allow/sets/${j}` })),
  );
  if (named.length === 0) return;
  const rows = await trx
    .selectFrom('destination_sets')
    .select('name')
    .where('name', 'in', [...new Set(named.map((n) => n.set))])
    .execute();
  const found = new Set(rows.map((r) => r.name));
  const problems = named
    .filter((n) => !found.has(n.set))
    .map((n) =>
      problem(
        n.pointer,
        `names destination set ${JSON.stringify(n.set)}, which does not exist`,
        'destinations.set',
      ),
    );
  if (problems.length > 0) {
    throw new ToolgateError('DEFINITION_INVALID', describeProblems('tool definition', problems), {
      toolId: definition.id,
      version: definition.version,
      problems,
    });
  }
}
