/**
 * @module What a passkey signs when a person decides (docs/architecture.md §6, "Passkeys bound to
 * the decision"): the WebAuthn challenge of a decision is the SHA-256 of the RFC 8785 canonical
 * JSON of this object, so an assertion commits to exactly one decision — which approval, change or
 * review, which tool and version, which canonical arguments (or definition), approve or reject,
 * until when, under which single-use server nonce. Pure: the desks build it when they issue a
 * challenge and again when they check one, and the offline verifier rebuilds it from the stored
 * decision alone. Never holds anything a signature could not be checked against offline.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';

/** The decisions a passkey can sign, and the enrolment step-up that adds another passkey. */
export type DecisionKind = 'approval' | 'change' | 'review' | 'passkey_enrolment';

/** The decision's own fields: everything but the nonce and the expiry the challenge adds. */
export interface DecisionSubject {
  readonly kind: DecisionKind;
  /** The approval id, change id, `tool@version` of a review, or the enrolling operator's id. */
  readonly id: string;
  /** The tool decided about (a grant change: the capability's agent, as `agent:<id>`). */
  readonly tool: string;
  /** Its version (a grant change: the capability). */
  readonly version: string;
  /**
   * The hash of what exactly is decided: an approval's canonical-argument hash, a review's
   * definition hash, a change's hash of its canonical request.
   */
  readonly args_hash: string;
  readonly decision: 'approve' | 'reject';
  /** Who decides: `operator:<id>`. An assertion of one person never stands for another's. */
  readonly approver: string;
  /**
   * An approval given with a bounded scope: the hash of its terms (calls, amount, until;
   * domain/decisions/approval-scopes.ts), so the passkey signs the scope as well as the call.
   * Absent for an approval of one call, a change or a review.
   */
  readonly scope?: string;
}

/** The signed object: the subject, an expiry and a single-use server nonce. */
export interface DecisionCommitment extends DecisionSubject {
  /** Version of this shape; a later shape is a new number, never a silent change (2: a scope). */
  readonly v: 1 | 2;
  /** ISO time after which no assertion over it is accepted. */
  readonly expires_at: string;
  /** 32 random bytes, base64url; the server takes it once. */
  readonly nonce: string;
}

/** The commitment of `subject` under `nonce` until `expiresAt`, with only its own fields. */
export function decisionCommitment(
  subject: DecisionSubject,
  nonce: string,
  expiresAt: string,
): DecisionCommitment {
  return {
    v: subject.scope === undefined ? 1 : 2,
    kind: subject.kind,
    id: subject.id,
    tool: subject.tool,
    version: subject.version,
    args_hash: subject.args_hash,
    decision: subject.decision,
    approver: subject.approver,
    ...(subject.scope === undefined ? {} : { scope: subject.scope }),
    expires_at: expiresAt,
    nonce,
  };
}

/** The WebAuthn challenge of a commitment, base64url (what clientDataJSON.challenge carries). */
export function decisionChallenge(commitment: DecisionCommitment): string {
  return createHash('sha256').update(canonicalJson(commitment), 'utf8').digest('base64url');
}

/** The fields of the subject two commitments disagree on (empty when they are one decision). */
export function subjectDifferences(a: DecisionSubject, b: DecisionSubject): string[] {
  const keys = [
    'kind',
    'id',
    'tool',
    'version',
    'args_hash',
    'decision',
    'approver',
    'scope',
  ] as const;
  return keys.filter((k) => a[k] !== b[k]);
}

/** What an audit record needs of an assertion stored with a decision. */
export interface StoredAssertionRef {
  readonly id: string;
  readonly credentialId: string;
  /** The challenge it answered: the hash of the decision's commitment. */
  readonly challenge: string;
}

/**
 * The audit record's reference to the assertion stored with the decision: its id, the credential
 * and the challenge (the hash of the commitment), so the chained record pins what was signed and
 * `decisions verify` finds the record that names it. Empty without an assertion.
 */
export function assertionDetails(passkey: StoredAssertionRef | null): Record<string, unknown> {
  if (!passkey) return {};
  return {
    second_factor_kind: 'passkey',
    assertion: passkey.id,
    credential: passkey.credentialId,
    challenge: passkey.challenge,
  };
}
