/**
 * @module What the decision routes' bodies share: the id parameter, and the refusal of a body that
 * names its approver — the approver is the request's authenticated operator (docs/architecture.md §6).
 */
import { problem, ToolgateError } from '../../../core/index.js';

export const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', pattern: '^[A-Za-z0-9_.:@+-]{1,100}$' } },
} as const;

/**
 * Accepted by the schema only to be refused with a message that says why: a client written for
 * the stated-approver API learns what changed instead of reading "additional property".
 */
export const statedApprover = {
  description:
    'Refused: the approver is the authenticated operator of the request, never a name it states',
} as const;

export function refuseStatedApprover(body: unknown): void {
  if (typeof body === 'object' && body !== null && 'approver' in body) {
    throw new ToolgateError(
      'INPUT_INVALID',
      'the approver is the authenticated operator of this request; remove "approver" from the body and authenticate as the approver',
      { problems: [problem('/approver', 'approver is not accepted', 'approval.approver')] },
    );
  }
}
