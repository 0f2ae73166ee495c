/**
 * @module Who may decide an approval or a change, and the step-up a decision needs: the
 * authenticated operator, holding the `approver` role (admin alone is not enough; the bootstrap
 * token never is), proving a fresh TOTP of their own where the action needs one
 * (docs/architecture.md §6). Shared by the approval desk, the change desk and security reviews.
 */
import { problem, ToolgateError } from '../../core/index.js';
import { hasRole, isBootstrap, type Operator, type SecondFactorCheck } from '../operators/index.js';

/**
 * Refuses (FORBIDDEN) anyone who may not decide: the bootstrap token is nobody in particular, and
 * an admin, auditor or owner without the `approver` role decides nothing.
 */
export function requireApprover(operator: Operator, what: string): void {
  if (isBootstrap(operator)) {
    throw new ToolgateError(
      'FORBIDDEN',
      `the bootstrap admin token cannot ${what}: decisions are an approver's, made as their own operator account`,
      {},
    );
  }
  if (!hasRole(operator, 'approver')) {
    throw new ToolgateError(
      'FORBIDDEN',
      `operator ${operator.id} cannot ${what}: it needs the approver role (it has ${operator.roles.join(', ') || 'no role'})`,
      {},
    );
  }
}

/**
 * A fresh TOTP of `operator` themselves, checked through `secondFactors` (which counts attempts
 * and refuses a used code). Resolves only for a valid code; a missing one is INPUT_INVALID before
 * any attempt is spent; the bootstrap token has no second factor and is refused.
 */
export async function requireStepUp(
  secondFactors: SecondFactorCheck,
  operator: Operator,
  code: unknown,
): Promise<void> {
  if (isBootstrap(operator)) {
    throw new ToolgateError(
      'FORBIDDEN',
      'the bootstrap admin token has no second factor; step-up needs an operator account',
      {},
    );
  }
  if (typeof code !== 'string' || code === '') {
    throw new ToolgateError('INPUT_INVALID', 'a second factor (totp) is required for this action', {
      problems: [problem('/totp', 'second factor required', 'step_up.totp')],
    });
  }
  await secondFactors.verify(operator.id, code);
}
