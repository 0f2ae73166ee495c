/**
 * @module What the desks share about decisions signed with a passkey (docs/architecture.md §6):
 * the port they use, the audit record's reference to the stored assertion, the refusal of a
 * TOTP code where the organisation requires a passkey (audited), and the catalog's port for a
 * security review signed with one.
 */
import type { Kysely } from 'kysely';
import { type Actor, systemActor, ToolgateError } from '../../core/index.js';
import { appendEvent, type Database } from '../../records/store/index.js';
import type { ReviewPasskeys } from '../catalog/index.js';
import { type Operator, operatorActor } from '../operators/index.js';
import { reviewSubject } from './decision-subjects.js';
import type { OperatorPasskeys } from './passkeys.js';

export { assertionDetails } from '../../core/index.js';

/** What a desk needs of the passkeys: options for a decision, its check, its storage. */
export type DecisionPasskeys = Pick<
  OperatorPasskeys,
  'decisionOptions' | 'verifyDecision' | 'recordIn'
>;

/** Where a start with `passkeys.require_for_irreversible` records it for the organisation. */
const REQUIREMENT = 'passkeys_required';

/**
 * Whether irreversible and permission-changing decisions need a passkey now: this process's own
 * setting, or what a start with the setting recorded in the database, so a CLI command or a
 * replica started without it holds the organisation's rule too (one read per such decision).
 */
export async function passkeysRequired(db: Kysely<Database>, own: boolean): Promise<boolean> {
  if (own) return true;
  const row = await db
    .selectFrom('meta')
    .select('value')
    .where('key', '=', REQUIREMENT)
    .executeTakeFirst();
  return row?.value === 'true';
}

/**
 * Records a start's explicit setting for every process on the database: `true` sets it, `false`
 * clears it (only a deliberate false turns the rule off); left unset, the recorded rule stands.
 * A change of the organisation's rule is audited (`passkeys.requirement_changed`, actor
 * `system:config`: the start's configuration set it), in the transaction that changes it.
 */
export async function recordPasskeyRequirement(
  db: Kysely<Database>,
  required: boolean | undefined,
  now: Date = new Date(),
): Promise<void> {
  if (required === undefined) return;
  await db.transaction().execute(async (trx) => {
    const was = await trx
      .selectFrom('meta')
      .select('value')
      .where('key', '=', REQUIREMENT)
      .executeTakeFirst();
    if ((was?.value === 'true') === required && was !== undefined) return;
    await trx
      .insertInto('meta')
      .values({ key: REQUIREMENT, value: String(required) })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: String(required) }))
      .execute();
    if ((was?.value === 'true') === required) return; // first record of the default: no change
    await appendEvent(trx, systemActor('config'), now, {
      action: 'passkeys.requirement_changed',
      subject: 'organisation:passkeys',
      details: {
        require_for_irreversible: required,
        was: was?.value === 'true',
        setting: 'passkeys.require_for_irreversible',
      },
    });
  });
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

/**
 * The catalog's port for reviews signed with a passkey: the commitment is the review's
 * (decision-subjects.ts: review id, tool, version, definition hash, verdict, reviewer), and a
 * review approval counts as permission-changing — it lets new code run — so the organisation's
 * requirement refuses a TOTP code for it (`own`: this process's setting, else the database's).
 */
export function reviewPasskeys(
  db: Kysely<Database>,
  passkeys: DecisionPasskeys,
  own: boolean,
  clock: () => Date,
): ReviewPasskeys {
  const verdict = (d: 'approved' | 'rejected') => (d === 'approved' ? 'approve' : 'reject');
  // Who decides, as the approvals' and changes' commitments name them.
  const reviewer = (op: Operator) => operatorActor(op, 'console').id;
  return {
    options: (op, review, decision, origin) =>
      passkeys.decisionOptions(op, reviewSubject(review, reviewer(op), verdict(decision)), origin),
    verify: (op, review, decision, answer, via) =>
      passkeys.verifyDecision(
        op,
        reviewSubject(review, reviewer(op), verdict(decision)),
        answer,
        via,
      ),
    recordIn: (trx, assertion) => passkeys.recordIn(trx, assertion),
    async refuseTotp(actor, reviewId) {
      if (await passkeysRequired(db, own))
        throw await passkeyRequiredError(db, actor, clock(), 'review', reviewId);
    },
  };
}
