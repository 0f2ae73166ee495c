/**
 * @module The reviewer's second factor (docs/security-model.md, "a security review's approval
 * … needs the reviewer's own second factor through every front"): asked for before the review's
 * transaction, after the reviewer rules, so that no code is spent on someone who may not review.
 */
import type { Kysely } from 'kysely';
import { type Actor, problem, ToolgateError } from '../../core/index.js';
import type { Database } from '../../records/store/index.js';
import type { Operator } from '../operators/index.js';
import {
  checkReviewer,
  findReviewRow,
  type ReviewInput,
  reviewNeedsStepUp,
  reviewViaFront,
} from './security-review.js';
import type { ToolDefinition } from './tool-definition.js';

/** Where the operators' second factors are checked (CatalogOptions.secondFactors). */
export interface ReviewSecondFactors {
  check(operatorId: string, code: unknown, rule: string): Promise<number>;
}

/** What an approval through a front that needs the step-up is refused with when no code came. */
export function stepUpRequired(toolId: string, version: string): ToolgateError<'INPUT_INVALID'> {
  return new ToolgateError(
    'INPUT_INVALID',
    `approving the review of ${toolId}@${version} makes a restricted, privileged or third-party tool callable: it needs your second factor (totp)`,
    { problems: [problem('/totp', 'second factor required', 'review.totp')] },
  );
}

/**
 * Whether this review of `def` needs the reviewer's second factor: an approval, made through a
 * front, of a definition that needs a review at all.
 */
export function stepUpNeeded(
  def: ToolDefinition,
  input: Pick<ReviewInput, 'decision'>,
  via: Actor['via'],
): boolean {
  return input.decision === 'approved' && reviewViaFront(via) && reviewNeedsStepUp(def);
}

/**
 * The reviewer's second factor, where approving this definition through a front needs one;
 * true once a code was accepted. Refuses before any code is spent on someone who may not
 * review at all (the bootstrap token, a non-approver): checkReviewer's ReviewerRefused, which
 * the caller audits. Reads outside any transaction, so a failed code stays counted.
 */
export async function reviewStepUp(
  db: Kysely<Database>,
  secondFactors: ReviewSecondFactors | null,
  review: {
    readonly toolId: string;
    readonly version: string;
    readonly operator: Operator;
    readonly input: ReviewInput;
    readonly via: Actor['via'];
    readonly totp?: unknown;
  },
): Promise<boolean> {
  const { toolId, version, operator, input } = review;
  if (input.decision !== 'approved' || !reviewViaFront(review.via)) return false;
  const row = await db
    .selectFrom('tool_versions')
    .select(['definition', 'definition_hash', 'owner', 'created_by'])
    .where('tool_id', '=', toolId)
    .where('version', '=', version)
    .executeTakeFirst();
  if (!row || row.definition_hash !== input.definition_hash) return false;
  if (!reviewNeedsStepUp(JSON.parse(row.definition) as ToolDefinition)) return false;
  const open = await findReviewRow(db, toolId, version, row.definition_hash);
  if (open && open.status !== 'pending') return false;
  await checkReviewer(db, operator, row.owner, open?.registered_by ?? row.created_by);
  if (typeof review.totp !== 'string' || review.totp === '') throw stepUpRequired(toolId, version);
  if (!secondFactors) {
    throw new ToolgateError(
      'FORBIDDEN',
      `approving ${toolId}@${version} needs the reviewer's second factor and this gateway checks none`,
      {},
    );
  }
  await secondFactors.check(operator.id, review.totp, 'review.totp');
  return true;
}
