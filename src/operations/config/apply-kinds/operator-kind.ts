/**
 * @module `apply -f` of Operator documents (C18, docs/configuration.md): accounts without secrets,
 * written as the applying admin through the writes of `operators create` and `operators update`,
 * so every rule of those holds (four eyes, the bootstrap token's limits, confirmation of a
 * deciding role handed over). `--prune` disables an account no longer declared, never deletes
 * it; an account a rule keeps enabled (the applying admin's own, the last enabled admin) is kept
 * and reported as drift with the reason.
 */
import type { Transaction } from 'kysely';
import type { Actor } from '../../../core/index.js';
import {
  disableRefusalIn,
  enabledAdmins,
  FourEyesRefused,
  keepAnAdminIn,
  type Operator,
  type OperatorDocument,
  type OperatorService,
} from '../../../domain/operators/index.js';
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

/**
 * Each document as the applying operator (`options.operator`, an admin: the service checked
 * before the transaction began). A refusal of four eyes is thrown, not listed: it refuses the
 * whole file as FORBIDDEN, and is audited.
 */
export async function applyOperators(
  { ctx, actor, options }: KindContext,
  docs: readonly IndexedDocument[],
  operators: OperatorService,
): Promise<KindOutcome> {
  const changes: ApplyChange[] = [];
  const problems: ConfigProblem[] = [];
  const by = options.operator;
  if (docs.length === 0 || !by) return { changes, problems };
  for (const { index, doc } of docs) {
    const spec = doc.spec as OperatorDocument;
    try {
      const { outcome, said } = await operators.applyIn(ctx.trx, by, spec, actor.via);
      changes.push({
        document: index,
        kind: 'Operator',
        subject: `operator ${spec.id}`,
        action: actionOf(outcome),
        summary:
          outcome === 'unchanged'
            ? 'unchanged'
            : outcome === 'created'
              ? said.join('; ')
              : `updated: ${said.join('; ')}`,
      });
    } catch (err) {
      problems.push(...refusalProblems(err, index, 'Operator'));
    }
  }
  return { changes, problems };
}

/**
 * Why `apply --prune` keeps an account no longer declared (the whole drift line), or null when it
 * would disable it: no operator applies (a library caller without one), it is the last enabled
 * admin account, or a rule of four eyes keeps it (the applying admin's own account; the bootstrap
 * token and a decider once set up). Reads only: a plan without `--prune` says the same (Y3).
 */
export async function operatorKept(
  trx: Transaction<Database>,
  by: Operator | undefined,
  id: string,
): Promise<string | null> {
  if (!by) {
    return 'no longer declared: kept (an account is disabled as the applying admin: apply over REST or with the CLI)';
  }
  const admins = await enabledAdmins(trx);
  if (admins.length === 1 && admins[0] === id) {
    return 'no longer declared: kept, it is the last enabled admin account';
  }
  const refusal = await disableRefusalIn(trx, by, id);
  return refusal === null ? null : `no longer declared: kept (${refusal})`;
}

/**
 * `apply --prune` of an account no longer declared: disabled as the applying admin, under the
 * rules of `operators update`; kept, with the reason, where `operatorKept` says so.
 */
export async function pruneOperator(
  trx: Transaction<Database>,
  operators: OperatorService,
  by: Operator | undefined,
  id: string,
  via: Actor['via'],
  reason: string,
): Promise<PruneOutcome> {
  const kept = await operatorKept(trx, by, id);
  if (kept !== null || !by) return { kept: true, summary: kept ?? '' };
  try {
    const done = await operators.disableIn(trx, by, id, via, reason);
    return { summary: done ? 'disabled' : 'already disabled or gone' };
  } catch (err) {
    if (!(err instanceof FourEyesRefused)) throw err;
    return { kept: true, summary: `no longer declared: kept (${err.message})` };
  }
}

/**
 * Refuses an apply that leaves no enabled admin account where there was one: one file can change
 * many accounts at once, so this is checked on the result, in the apply's transaction (FORBIDDEN,
 * audited as a four-eyes refusal `last_admin`).
 */
export function keepAnAdmin(trx: Transaction<Database>, before: readonly string[]): Promise<void> {
  return keepAnAdminIn(trx, before, 'apply');
}
