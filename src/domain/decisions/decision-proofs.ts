/**
 * @module The offline check of decisions signed with a passkey (`toolgate decisions verify`,
 * docs/architecture.md §6): for each stored assertion, rebuild what was decided from the stored
 * decision alone (decision-subjects.ts), compare it with the signed commitment, recompute the
 * challenge, find the audit record that names the assertion, and verify the signature, origin,
 * RP ID hash and user-verification flag with the credential's public key kept with the
 * assertion. The key is never taken from the evidence alone: each assertion's credential (id and
 * public key) must be one the verifier trusts for its approver — the store's enrolled passkeys
 * (and those the audit chain recorded at enrolment, removed since), or for an evidence file the
 * keys file the verifier holds (`decisions keys`); an evidence file's own key proves nothing.
 * Works on the live store, a restored backup, or an evidence file `decisions export` wrote (no
 * database, no network). Never changes anything.
 */
import type { Kysely } from 'kysely';
import {
  type DecisionCommitment,
  type DecisionSubject,
  decisionChallenge,
  subjectDifferences,
} from '../../core/index.js';
import type { Database } from '../../records/store/index.js';
import { type ScopeTerms, storedScopeTerms } from './approval-scopes.js';
import {
  approvalSubject,
  type ChangeFields,
  changeDefinitionHash,
  changeSubjectOf,
  reviewSubject,
} from './decision-subjects.js';
import { webauthn } from './webauthn.js';

type AssertionRow = Database['decision_assertions'];

/** Everything one assertion is checked against: portable, so an export verifies offline. */
export interface DecisionEvidence {
  readonly assertion: AssertionRow;
  /** The approval as stored (kind `approval`). */
  readonly approval?: {
    readonly id: string;
    readonly tool_id: string;
    readonly tool_version: string;
    readonly args_hash: string;
    readonly status: string;
    readonly decided_by: string | null;
    /** The terms of the scope it was given with (absent or null: one call). */
    readonly scope?: ScopeTerms | null;
  };
  /** The change request and the definition hash it activates (kind `change`). */
  readonly change?: ChangeFields & { readonly definition_hash: string | null };
  /** The review as stored (kind `review`). */
  readonly review?: {
    readonly id: string;
    readonly tool_id: string;
    readonly version: string;
    readonly definition_hash: string;
    readonly status: string;
    readonly reviewer: string | null;
  };
  /**
   * The audit events of the decision's subject, each with who wrote it (`actor`) and what it is
   * about (`subject`); the one that names the assertion must be the signer's, about the decision
   * signed. An export written before they were checked lacks both, and fails the check.
   */
  readonly events: readonly AuditedEvent[];
}

/** One audit event as an export carries it. */
export interface AuditedEvent {
  readonly action: string;
  readonly actor?: string;
  readonly subject?: string;
  readonly details: unknown;
}

export interface DecisionProof {
  readonly assertion: string;
  readonly kind: string;
  readonly subject: string;
  readonly approver: string;
  readonly credential: string;
  readonly at: string;
  readonly ok: boolean;
  /** What failed, in words (empty when `ok`). */
  readonly problems: readonly string[];
}

export interface DecisionProofReport {
  readonly ok: boolean;
  readonly checked: number;
  readonly failed: number;
  readonly proofs: readonly DecisionProof[];
}

/** One passkey the verifier trusts: whose it is, its credential id and COSE public key. */
export interface TrustedKey {
  readonly operator_id: string;
  readonly credential_id: string;
  /** base64url of the COSE public key, as enrolled. */
  readonly public_key: string;
  /** Removed since its enrolment (known from the enrolment's audit record). */
  readonly removed?: boolean;
}

/**
 * The keys each assertion must have been made with, and the relying party pinned instead of the
 * one stored with each assertion.
 */
export interface ProofOptions {
  readonly trustedKeys: readonly TrustedKey[];
  readonly rpId?: string;
  readonly origin?: string;
}

/** The trusted key of the assertion's credential for its approver, or a problem. */
function trustedKeyOf(
  a: AssertionRow,
  keys: readonly TrustedKey[],
  problems: string[],
): string | null {
  const key = keys.find(
    (k) => `operator:${k.operator_id}` === a.approver_id && k.credential_id === a.credential_id,
  );
  if (!key) {
    problems.push(
      `credential ${a.credential_id} is not a passkey the verifier trusts for ${a.approver_id}`,
    );
    return null;
  }
  if (key.public_key !== a.public_key) {
    problems.push(
      `the public key stored with the assertion is not the one enrolled for credential ${a.credential_id}`,
    );
  }
  return key.public_key;
}

/** The decision as stored, as the commitment would name it; null with a problem if it is not. */
function storedSubject(e: DecisionEvidence, problems: string[]): DecisionSubject | null {
  const a = e.assertion;
  switch (a.kind) {
    case 'approval': {
      if (!e.approval || e.approval.id !== a.subject_id) {
        problems.push(`approval ${a.subject_id} is not in the evidence`);
        return null;
      }
      if (e.approval.decided_by !== a.approver_id)
        problems.push(
          `approval ${a.subject_id} was decided by ${e.approval.decided_by ?? 'nobody'}, not ${a.approver_id}`,
        );
      return approvalSubject(e.approval, a.approver_id, 'approve', e.approval.scope ?? undefined);
    }
    case 'change':
      if (!e.change || e.change.id !== a.subject_id) {
        problems.push(`change ${a.subject_id} is not in the evidence`);
        return null;
      }
      return changeSubjectOf(e.change, e.change.definition_hash, a.approver_id);
    case 'review': {
      if (!e.review || e.review.id !== a.subject_id) {
        problems.push(`review ${a.subject_id} is not in the evidence`);
        return null;
      }
      if (e.review.reviewer !== a.approver_id)
        problems.push(
          `review ${a.subject_id} was recorded by ${e.review.reviewer ?? 'nobody'}, not ${a.approver_id}`,
        );
      // The verdict signed is the verdict stored: an approval recorded for a signed rejection
      // (or the reverse) differs in `decision`.
      const verdict = e.review.status === 'rejected' ? 'reject' : 'approve';
      if (e.review.status !== 'approved' && e.review.status !== 'rejected')
        problems.push(`review ${a.subject_id} is ${e.review.status}, not decided`);
      return reviewSubject(e.review, a.approver_id, verdict);
    }
    default:
      problems.push(`unknown decision kind ${a.kind}`);
      return null;
  }
}

/** An audit event of the decision, its details read as an object. */
interface AuditRecord {
  readonly action: string;
  readonly actor: string | undefined;
  readonly subject: string | undefined;
  readonly details: Record<string, unknown>;
}

/** The audit events of the decision that name this assertion, its credential and challenge. */
function auditedBy(e: DecisionEvidence): AuditRecord[] {
  const a = e.assertion;
  return e.events
    .map((ev) => ({
      action: ev.action,
      actor: ev.actor,
      subject: ev.subject,
      details: (ev.details ?? {}) as Record<string, unknown>,
    }))
    .filter(
      ({ details: d }) =>
        d.assertion === a.id && d.challenge === a.challenge && d.credential === a.credential_id,
    );
}

/** The record each kind of decision writes when it is taken with a passkey. */
const DECISION_ACTION: Readonly<Record<string, string>> = {
  approval: 'approval.approved',
  change: 'change.approved',
  review: 'tool.reviewed',
};

/**
 * The subject the decision's own audit record is about: `approval:<id>`, `change:<id>`, and for a
 * review the tool version reviewed (`tool:<id>@<version>`, as `tool.reviewed` is written); null
 * when the evidence holds no stored decision to take it from (already a problem).
 */
function recordSubjectOf(e: DecisionEvidence): string | null {
  const a = e.assertion;
  switch (a.kind) {
    case 'approval':
      return `approval:${a.subject_id}`;
    case 'change':
      return `change:${a.subject_id}`;
    case 'review':
      return e.review ? `tool:${e.review.tool_id}@${e.review.version}` : null;
    default:
      return null;
  }
}

/**
 * The audit record that names the assertion is the signer's record of the signed decision (attack
 * round 27, G4): its actor is the operator whose credential signed (the assertion's approver, whom
 * the trusted key belongs to), and its subject is the decision's. A record rewritten to name
 * another operator or another decision — or naming none — is not the record of this signature.
 */
function recordAuthorship(e: DecisionEvidence, record: AuditRecord): string[] {
  const problems: string[] = [];
  const signer = e.assertion.approver_id;
  if (record.actor === undefined)
    problems.push(
      'the audit record naming this assertion names no actor (an export older than this check: export it again)',
    );
  else if (record.actor !== signer)
    problems.push(
      `the audit record naming this assertion was written by ${record.actor}, not by ${signer} who signed`,
    );
  const subject = recordSubjectOf(e);
  if (record.subject === undefined)
    problems.push(
      'the audit record naming this assertion names no subject (an export older than this check: export it again)',
    );
  else if (subject !== null && record.subject !== subject)
    problems.push(
      `the audit record naming this assertion is about ${record.subject}, not ${subject}, the decision signed`,
    );
  return problems;
}

/**
 * The audit record that names the assertion says what was signed, wherever it states it: it is
 * the decision's own record (not another action carrying the assertion's id), and a review's
 * record states the signed verdict, review and definition hash. What an auditor reads in the log
 * may never be the opposite of what the person signed.
 */
function recordAsAudited(
  e: DecisionEvidence,
  commitment: DecisionCommitment | null,
  record: AuditRecord,
): string[] {
  const problems: string[] = [];
  const expected = DECISION_ACTION[e.assertion.kind];
  if (expected !== undefined && record.action !== expected)
    problems.push(`the audit record naming this assertion is ${record.action}, not ${expected}`);
  if (e.assertion.kind === 'review' && commitment) {
    const d = record.details;
    const verdict = commitment.decision === 'approve' ? 'approved' : 'rejected';
    if (d.decision !== verdict)
      problems.push(
        `the audit record states the verdict ${String(d.decision)}, not the signed ${verdict}`,
      );
    if (d.definition_hash !== commitment.args_hash)
      problems.push('the audit record states another definition hash than the one signed');
    if (d.review !== commitment.id)
      problems.push('the audit record states another review than the one signed');
  }
  return problems;
}

/**
 * An approval's audit record states the scope it was given with: what an auditor reads must be
 * what was signed (calls, amount, until), and a record of one call must not claim a scope.
 */
function scopeAsAudited(e: DecisionEvidence, details: Record<string, unknown>): string | null {
  if (e.assertion.kind !== 'approval' || !e.approval) return null;
  const signed = e.approval.scope ?? null;
  const told = (details.scope ?? null) as Record<string, unknown> | null;
  if (signed === null && told === null) return null;
  if (signed === null || told === null)
    return 'the audit record and the signed decision disagree on whether a scope was given';
  const same =
    told.calls === signed.calls &&
    (told.amount_cents ?? null) === signed.amount_cents &&
    told.until === signed.until;
  return same ? null : 'the audit record states another scope than the one signed';
}

/** One assertion checked against its evidence; never throws. */
export async function proveDecision(
  e: DecisionEvidence,
  options: ProofOptions,
): Promise<DecisionProof> {
  const a = e.assertion;
  const problems: string[] = [];
  const trustedKey = trustedKeyOf(a, options.trustedKeys, problems);
  let commitment: DecisionCommitment | null = null;
  try {
    commitment = JSON.parse(a.commitment) as DecisionCommitment;
  } catch {
    problems.push('the stored commitment is not JSON');
  }
  const subject = storedSubject(e, problems);
  if (commitment && subject) {
    const differs = subjectDifferences(commitment, subject);
    if (differs.length > 0)
      problems.push(`the stored decision differs from what was signed in ${differs.join(', ')}`);
    if (Date.parse(commitment.expires_at) < Date.parse(a.at))
      problems.push('the assertion was accepted after its commitment expired');
  }
  const challenge = commitment ? decisionChallenge(commitment) : '';
  if (commitment && challenge !== a.challenge)
    problems.push('the stored challenge is not the hash of the stored commitment');
  const audits = auditedBy(e);
  if (audits.length === 0) problems.push('no audit record of the decision names this assertion');
  for (const record of audits) {
    const disagrees = scopeAsAudited(e, record.details);
    if (disagrees) problems.push(disagrees);
    problems.push(...recordAuthorship(e, record));
    problems.push(...recordAsAudited(e, commitment, record));
  }
  // Only a trusted key can make a signature count; the assertion's own key decides nothing.
  if (commitment && trustedKey !== null) {
    try {
      const verified = await (await webauthn()).verifyAuthenticationResponse({
        response: {
          id: a.credential_id,
          rawId: a.credential_id,
          type: 'public-key',
          clientExtensionResults: {},
          response: {
            clientDataJSON: a.client_data_json,
            authenticatorData: a.authenticator_data,
            signature: a.signature,
            ...(a.user_handle ? { userHandle: a.user_handle } : {}),
          },
        },
        // Recomputed from the commitment: clientDataJSON must carry exactly this challenge.
        expectedChallenge: challenge,
        expectedOrigin: options.origin ?? a.origin,
        expectedRPID: options.rpId ?? a.rp_id,
        credential: {
          id: a.credential_id,
          publicKey: Buffer.from(trustedKey, 'base64url'),
          counter: 0,
        },
        requireUserVerification: true,
      });
      if (!verified.verified) problems.push('the signature does not verify');
    } catch (err) {
      problems.push(
        `the signature does not verify: ${err instanceof Error ? err.message.slice(0, 200) : 'error'}`,
      );
    }
  }
  return {
    assertion: a.id,
    kind: a.kind,
    subject: a.subject_id,
    approver: a.approver_id,
    credential: a.credential_id,
    at: a.at,
    ok: problems.length === 0,
    problems,
  };
}

/** Every assertion of the evidence, checked. */
export async function proveDecisions(
  evidence: readonly DecisionEvidence[],
  options: ProofOptions,
): Promise<DecisionProofReport> {
  const proofs: DecisionProof[] = [];
  for (const e of evidence) proofs.push(await proveDecision(e, options));
  const failed = proofs.filter((p) => !p.ok).length;
  return { ok: failed === 0, checked: proofs.length, failed, proofs };
}

/** The store's evidence: each stored assertion (of `subject`, when given) with its decision. */
export class DecisionProofs {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** The evidence an auditor takes away (`toolgate decisions export`). */
  async evidence(filter: { subject?: string } = {}): Promise<DecisionEvidence[]> {
    let q = this.#db.selectFrom('decision_assertions').selectAll().orderBy('at').orderBy('id');
    if (filter.subject !== undefined) q = q.where('subject_id', '=', filter.subject);
    const out: DecisionEvidence[] = [];
    for (const assertion of await q.execute()) out.push(await this.#evidenceOf(assertion));
    return out;
  }

  /**
   * The passkeys the store vouches for: every enrolled one, and each removed one whose enrolment
   * record (`passkey.enrolled`, in the audit chain) names its public key. What an auditor takes
   * away with an export (`toolgate decisions keys`) and checks it against.
   */
  async keys(): Promise<TrustedKey[]> {
    const rows = await this.#db
      .selectFrom('operator_passkeys')
      .select(['operator_id', 'credential_id', 'public_key'])
      .orderBy('operator_id')
      .orderBy('created_at')
      .execute();
    const out: TrustedKey[] = rows.map((r) => ({ ...r }));
    const enrolled = await this.#db
      .selectFrom('events')
      .select(['subject', 'details'])
      .where('action', '=', 'passkey.enrolled')
      .orderBy('seq')
      .execute();
    for (const ev of enrolled) {
      const d = (parseJson(ev.details) ?? {}) as Record<string, unknown>;
      if (!ev.subject.startsWith('operator:')) continue;
      if (typeof d.credential_id !== 'string' || typeof d.public_key !== 'string') continue;
      if (out.some((k) => k.credential_id === d.credential_id)) continue;
      out.push({
        operator_id: ev.subject.slice('operator:'.length),
        credential_id: d.credential_id,
        public_key: d.public_key,
        removed: true,
      });
    }
    return out;
  }

  /** Checks the store's assertions (of `subject`, when given) against the store's own keys. */
  async verify(
    filter: { subject?: string } & Omit<ProofOptions, 'trustedKeys'> = {},
  ): Promise<DecisionProofReport> {
    const { subject, ...options } = filter;
    return proveDecisions(await this.evidence(subject !== undefined ? { subject } : {}), {
      ...options,
      trustedKeys: await this.keys(),
    });
  }

  async #evidenceOf(assertion: AssertionRow): Promise<DecisionEvidence> {
    const events = await this.#eventsOf(`${assertion.kind}:${assertion.subject_id}`);
    const base = { assertion, events };
    switch (assertion.kind) {
      case 'approval': {
        const approval = await this.#db
          .selectFrom('approvals')
          .select(['id', 'tool_id', 'tool_version', 'args_hash', 'status', 'decided_by'])
          .where('id', '=', assertion.subject_id)
          .executeTakeFirst();
        if (!approval) return base;
        const scope = await storedScopeTerms(this.#db, approval.id);
        return { ...base, approval: { ...approval, scope } };
      }
      case 'change': {
        const row = await this.#db
          .selectFrom('change_requests')
          .selectAll()
          .where('id', '=', assertion.subject_id)
          .executeTakeFirst();
        if (!row) return base;
        return {
          ...base,
          change: { ...row, definition_hash: await changeDefinitionHash(this.#db, row) },
        };
      }
      case 'review': {
        const review = await this.#db
          .selectFrom('security_reviews')
          .select(['id', 'tool_id', 'version', 'definition_hash', 'status', 'reviewer'])
          .where('id', '=', assertion.subject_id)
          .executeTakeFirst();
        if (!review) return base;
        // A review's audit record is the tool's event (`tool.reviewed`, subject tool@version).
        const reviewed = await this.#eventsOf(`tool:${review.tool_id}@${review.version}`);
        return { ...base, events: [...events, ...reviewed], review };
      }
      default:
        return base;
    }
  }

  /** The audit events of one subject, with who wrote each and what it is about. */
  async #eventsOf(subject: string): Promise<AuditedEvent[]> {
    const rows = await this.#db
      .selectFrom('events')
      .select(['action', 'actor', 'subject', 'details'])
      .where('subject', '=', subject)
      .orderBy('seq')
      .execute();
    return rows.map((ev) => ({
      action: ev.action,
      actor: ev.actor,
      subject: ev.subject,
      details: parseJson(ev.details),
    }));
  }
}

function parseJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
