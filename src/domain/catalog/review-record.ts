/**
 * @module A decided security review written down (docs/architecture.md §8, C1): the review row
 * moved from pending to the verdict, the passkey's assertion stored beside it when one signed it,
 * and the `tool.reviewed` event naming that assertion — all in the review's own transaction, so
 * the decision, its proof and its audit record commit together or not at all.
 */
import type { Transaction } from 'kysely';
import { type Actor, assertionDetails, ToolgateError } from '../../core/index.js';
import { appendEvent, type Database, type SecurityReviewRow } from '../../records/store/index.js';
import type { ReviewAssertion, ReviewPasskeys } from './review-step-up.js';
import type { ReviewInput } from './security-review.js';

/**
 * Records `input` on the pending review `existing` of `toolId@version` (definition `hash`) by
 * `actor`. Refuses (REVIEW_STATE) when another decision got there first; never stores an
 * assertion made for another review.
 */
export async function recordReviewIn(
  trx: Transaction<Database>,
  passkeys: Pick<ReviewPasskeys, 'recordIn'> | null,
  review: {
    readonly toolId: string;
    readonly version: string;
    readonly hash: string;
    readonly existing: SecurityReviewRow;
    readonly input: ReviewInput;
    readonly actor: Actor;
    readonly now: Date;
    readonly passkey: ReviewAssertion | null;
  },
): Promise<void> {
  const { toolId, version, existing, input, actor, now, passkey } = review;
  if (passkey && passkey.row.subject_id !== existing.id)
    throw new Error('a passkey verified for another review reached this one');
  const updated = await trx
    .updateTable('security_reviews')
    .set({
      status: input.decision,
      reviewer: actor.id,
      reviewed_at: now.toISOString(),
      notes: input.notes,
    })
    .where('id', '=', existing.id)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) !== 1) {
    throw new ToolgateError('REVIEW_STATE', `${toolId}@${version} was decided meanwhile`, {
      toolId,
      version,
      status: 'approved',
    });
  }
  if (passkey) {
    if (!passkeys) throw new Error('a passkey was verified by a catalog that stores none');
    await passkeys.recordIn(trx, passkey);
  }
  await appendEvent(trx, actor, now, {
    action: 'tool.reviewed',
    subject: `tool:${toolId}@${version}`,
    details: {
      review: existing.id,
      decision: input.decision,
      definition_hash: review.hash,
      notes: input.notes,
      reasons: JSON.parse(existing.reasons) as unknown,
      ...assertionDetails(passkey),
    },
  });
}
