/**
 * @module The reviewer's second factor (docs/security-model.md, "a security review's approval
 * … needs the reviewer's own second factor through every front"): a TOTP code, or a passkey's
 * assertion over exactly this review (docs/architecture.md §6, "Passkeys bound to the decision").
 * Asked for before the review's transaction, after the reviewer rules, so that no code or
 * challenge is spent on someone who may not review. Approving a review lets new code run, so it
 * is a permission-changing decision: where the organisation requires passkeys for those, a TOTP
 * code is refused (PASSKEY_REQUIRED).
 */
import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { Kysely, Transaction } from 'kysely';
import {
  type Actor,
  type DecisionCommitment,
  problem,
  type StoredAssertionRef,
  ToolgateError,
} from '../../core/index.js';
import type { Database, SecurityReviewRow } from '../../records/store/index.js';
import { type Operator, operatorActor } from '../operators/index.js';
import {
  checkReviewer,
  findReviewRow,
  type ReviewDecision,
  type ReviewInput,
  reviewNeedsStepUp,
  reviewViaFront,
} from './security-review.js';
import type { ToolDefinition } from './tool-definition.js';

/** Where the operators' second factors are checked (CatalogOptions.secondFactors). */
export interface ReviewSecondFactors {
  check(operatorId: string, code: unknown, rule: string): Promise<number>;
}

/** The stored review a passkey signs: its id, and the tool, version and definition it binds to. */
export type ReviewRef = Pick<SecurityReviewRow, 'id' | 'tool_id' | 'version' | 'definition_hash'>;

/** A passkey's assertion over one review, verified and its challenge spent; stored with it. */
export interface ReviewAssertion extends StoredAssertionRef {
  readonly row: Database['decision_assertions'];
}

/** The options of `navigator.credentials.get` for one review, with the commitment they sign. */
export type ReviewPasskeyOptions = PublicKeyCredentialRequestOptionsJSON & {
  readonly commitment: DecisionCommitment;
};

/**
 * The operators' passkeys as a review uses them (CatalogOptions.passkeys; the host fills it from
 * the decisions' passkeys, which build the review's commitment: domain/decisions).
 */
export interface ReviewPasskeys {
  /** Options whose challenge commits to this review, verdict and reviewer. */
  options(
    op: Operator,
    review: ReviewRef,
    decision: ReviewDecision,
    requestOrigin: string | undefined,
  ): Promise<ReviewPasskeyOptions>;
  /** Checks an assertion for exactly this review and verdict, spends its challenge (audited). */
  verify(
    op: Operator,
    review: ReviewRef,
    decision: ReviewDecision,
    answer: unknown,
    via: Actor['via'],
  ): Promise<ReviewAssertion>;
  /** Stores a verified assertion in the review's own transaction. */
  recordIn(trx: Transaction<Database>, assertion: ReviewAssertion): Promise<void>;
  /**
   * Refuses a TOTP code (PASSKEY_REQUIRED, after recording `passkey.required`) where the
   * organisation requires passkeys for permission-changing decisions; returns otherwise.
   */
  refuseTotp(actor: Actor, reviewId: string): Promise<void>;
}

/** What an approval through a front that needs the step-up is refused with when no code came. */
export function stepUpRequired(toolId: string, version: string): ToolgateError<'INPUT_INVALID'> {
  return new ToolgateError(
    'INPUT_INVALID',
    `approving the review of ${toolId}@${version} makes a restricted, privileged or third-party tool callable: it needs your second factor (a TOTP code, or your passkey)`,
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

/** The reviewer's proof: whether a second factor was accepted, and the passkey's assertion. */
export interface ReviewProof {
  readonly steppedUp: boolean;
  readonly passkey: ReviewAssertion | null;
}

export interface ReviewFactors {
  readonly totp: ReviewSecondFactors | null;
  readonly passkeys: ReviewPasskeys | null;
}

function noPasskeys(): ToolgateError<'FORBIDDEN'> {
  return new ToolgateError('FORBIDDEN', 'this gateway checks no passkeys', {});
}

/** The stored version and its open review, read outside any transaction. */
async function reviewedVersion(db: Kysely<Database>, toolId: string, version: string) {
  const row = await db
    .selectFrom('tool_versions')
    .select(['definition', 'definition_hash', 'owner', 'created_by'])
    .where('tool_id', '=', toolId)
    .where('version', '=', version)
    .executeTakeFirst();
  const open = row ? await findReviewRow(db, toolId, version, row.definition_hash) : undefined;
  return { row, open };
}

/**
 * The reviewer's second factor, where approving this definition through a front needs one, or a
 * passkey's assertion whenever one is presented (any verdict, any front: it is checked against
 * exactly the verdict stated and stored with the review). Refuses before any code or challenge
 * is spent on someone who may not review at all (the bootstrap token, a non-approver):
 * checkReviewer's ReviewerRefused, which the caller audits. Reads outside any transaction, so a
 * failed code stays counted. A definition changed or decided meanwhile answers no proof: the
 * review's transaction refuses it (REVIEW_HASH_MISMATCH, REVIEW_STATE).
 */
export async function reviewStepUp(
  db: Kysely<Database>,
  factors: ReviewFactors,
  review: {
    readonly toolId: string;
    readonly version: string;
    readonly operator: Operator;
    readonly input: ReviewInput;
    readonly via: Actor['via'];
    readonly totp?: unknown;
    readonly passkey?: unknown;
  },
): Promise<ReviewProof> {
  const none: ReviewProof = { steppedUp: false, passkey: null };
  const { toolId, version, operator, input } = review;
  const signed = review.passkey !== undefined;
  if (!signed && (input.decision !== 'approved' || !reviewViaFront(review.via))) return none;
  const { row, open } = await reviewedVersion(db, toolId, version);
  if (!row || row.definition_hash !== input.definition_hash) return none;
  if (open && open.status !== 'pending') return none;
  const definition = JSON.parse(row.definition) as ToolDefinition;
  if (!signed && !reviewNeedsStepUp(definition)) return none;
  await checkReviewer(db, operator, row.owner, open?.registered_by ?? row.created_by, definition);
  if (signed) {
    if (!factors.passkeys) throw noPasskeys();
    if (!open) throw noOpenReview(toolId, version);
    const passkey = await factors.passkeys.verify(
      operator,
      open,
      input.decision,
      review.passkey,
      review.via,
    );
    return { steppedUp: true, passkey };
  }
  // Approving lets new code run: where passkeys are required, a code is refused, given or not.
  await factors.passkeys?.refuseTotp(
    operatorActor(operator, review.via),
    open?.id ?? `${toolId}@${version}`,
  );
  if (typeof review.totp !== 'string' || review.totp === '') throw stepUpRequired(toolId, version);
  if (!factors.totp) {
    throw new ToolgateError(
      'FORBIDDEN',
      `approving ${toolId}@${version} needs the reviewer's second factor and this gateway checks none`,
      {},
    );
  }
  await factors.totp.check(operator.id, review.totp, 'review.totp');
  return { steppedUp: true, passkey: null };
}

function noOpenReview(toolId: string, version: string): ToolgateError<'REVIEW_STATE'> {
  return new ToolgateError(
    'REVIEW_STATE',
    `${toolId}@${version} has no open security review to sign with a passkey (a draft registered before reviews existed): review it with your TOTP code`,
    { toolId, version, status: 'none' },
  );
}

/** Who asks for a review's passkey options, from where, for which definition and verdict. */
export interface ReviewPasskeyRequest {
  readonly toolId: string;
  readonly version: string;
  readonly operator: Operator;
  readonly stated: Pick<ReviewInput, 'definition_hash' | 'decision'>;
  /** The Origin the request came from (the relying party, where none is configured). */
  readonly requestOrigin: string | undefined;
  readonly via?: Actor['via'];
}

/**
 * The passkey options of one pending review, for the verdict the reviewer is about to state: the
 * stated hash must be the stored definition's and its review still pending, and the reviewer
 * must pass the reviewer rules (refused and audited like the review itself) before a challenge
 * is issued.
 */
export async function reviewPasskeyOptions(
  db: Kysely<Database>,
  passkeys: ReviewPasskeys | null,
  review: ReviewPasskeyRequest,
): Promise<ReviewPasskeyOptions> {
  const { toolId, version, operator, stated } = review;
  if (!passkeys) throw noPasskeys();
  const { row, open } = await reviewedVersion(db, toolId, version);
  if (!row)
    throw new ToolgateError('TOOL_NOT_FOUND', `no tool ${toolId}@${version}`, { toolId, version });
  if (row.definition_hash !== stated.definition_hash) {
    throw new ToolgateError(
      'REVIEW_HASH_MISMATCH',
      `the review names ${stated.definition_hash}, but ${toolId}@${version} is ${row.definition_hash}; review the stored definition`,
      { toolId, version, statedHash: stated.definition_hash, definitionHash: row.definition_hash },
    );
  }
  if (!open) throw noOpenReview(toolId, version);
  if (open.status !== 'pending') {
    throw new ToolgateError(
      'REVIEW_STATE',
      `${toolId}@${version} was already ${open.status} by ${open.reviewer ?? 'an approver'}`,
      { toolId, version, status: open.status === 'approved' ? 'approved' : 'rejected' },
    );
  }
  const definition = JSON.parse(row.definition) as ToolDefinition;
  await checkReviewer(db, operator, row.owner, open.registered_by, definition);
  return passkeys.options(operator, open, stated.decision, review.requestOrigin);
}
