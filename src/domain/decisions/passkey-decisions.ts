/**
 * @module What the desks share about decisions signed with a passkey (docs/architecture.md §6):
 * the port they use, the audit record's reference to the stored assertion, and the refusal of a
 * TOTP code where the organisation requires a passkey (audited).
 */
import type { Kysely } from 'kysely';
import { type Actor, ToolgateError } from '../../core/index.js';
import { appendEvent, type Database } from '../../records/store/index.js';
import type { OperatorPasskeys, VerifiedDecision } from './passkeys.js';

/** What a desk needs of the passkeys: options for a decision, its check, its storage. */
export type DecisionPasskeys = Pick<
  OperatorPasskeys,
  'decisionOptions' | 'verifyDecision' | 'recordIn'
>;

/**
 * The audit record's reference to the assertion stored with the decision: its id, the credential
 * and the challenge (the hash of the commitment), so the chained record pins what was signed.
 */
export function assertionDetails(passkey: VerifiedDecision | null): Record<string, unknown> {
  if (!passkey) return {};
  return {
    second_factor_kind: 'passkey',
    assertion: passkey.id,
    credential: passkey.credentialId,
    challenge: passkey.challenge,
  };
}

/** PASSKEY_REQUIRED for `kind` `id`, after recording the refusal (`passkey.required`). */
export async function passkeyRequiredError(
  db: Kysely<Database>,
  actor: Actor,
  now: Date,
  kind: 'approval' | 'change' | 'review',
  id: string,
): Promise<ToolgateError<'PASSKEY_REQUIRED'>> {
  await appendEvent(db, actor, now, {
    action: 'passkey.required',
    subject: `${kind}:${id}`,
    details: { kind },
  });
  return new ToolgateError(
    'PASSKEY_REQUIRED',
    `this organisation requires a passkey for irreversible and permission-changing decisions: approve ${kind} ${id} with your passkey (enrol one on the console's Passkeys page); a TOTP code is not accepted here`,
    { kind, id },
  );
}
