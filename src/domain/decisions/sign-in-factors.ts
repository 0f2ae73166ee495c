/**
 * @module The second factors a local sign-in accepts, through the operators' `SecondFactorCheck`
 * port: the operator's TOTP, or an assertion of one of their passkeys (docs/architecture.md §6).
 * An account with either may sign in; each check reads the store, so a removal holds at once.
 */
import type { SecondFactorCheck } from '../operators/index.js';
import type { OperatorSecondFactors } from './operator-second-factors.js';
import type { OperatorPasskeys } from './passkeys.js';

export class SignInFactors implements SecondFactorCheck {
  readonly #totp: Pick<OperatorSecondFactors, 'enrolled' | 'verify'>;
  readonly #passkeys: Pick<OperatorPasskeys, 'has' | 'verifyLogin'>;

  constructor(
    totp: Pick<OperatorSecondFactors, 'enrolled' | 'verify'>,
    passkeys: Pick<OperatorPasskeys, 'has' | 'verifyLogin'>,
  ) {
    this.#totp = totp;
    this.#passkeys = passkeys;
  }

  async enrolled(operatorId: string): Promise<boolean> {
    return (await this.#totp.enrolled(operatorId)) || (await this.#passkeys.has(operatorId));
  }

  verify(operatorId: string, code: string): Promise<void> {
    return this.#totp.verify(operatorId, code);
  }

  verifyPasskey(operatorId: string, assertion: unknown): Promise<void> {
    return this.#passkeys.verifyLogin(operatorId, assertion);
  }
}
