/**
 * @module Operators' passkeys (WebAuthn, verified by `@simplewebauthn/server`; docs/architecture.md
 * §6, "Passkeys bound to the decision"): enrolled by the operator themselves in the console, after
 * proving a current second factor (a TOTP code, or one of their passkeys), listed, removed (by
 * themselves or an admin), used as the second factor of a console sign-in and of a decision. For a
 * decision the challenge is the hash of the decision's commitment (core/decision-commitment.ts):
 * the assertion signs exactly one approval, change or review, and is stored with it for the
 * offline check (decision-proofs.ts). Only public keys are stored; every challenge is single use.
 */
import { randomBytes } from 'node:crypto';
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  VerifiedAuthenticationResponse,
  VerifiedRegistrationResponse,
} from '@simplewebauthn/server';
import type { Kysely, Transaction } from 'kysely';
import {
  type Actor,
  type Clock,
  canonicalJson,
  type DecisionCommitment,
  type DecisionSubject,
  decisionChallenge,
  decisionCommitment,
  isToolgateError,
  problem,
  subjectDifferences,
  systemClock,
  ToolgateError,
  timeOrderedId,
} from '../../core/index.js';
import { appendEvent, type Database } from '../../records/store/index.js';
import { hasRole, isBootstrap, type Operator, operatorActor } from '../operators/index.js';
import type { OperatorSecondFactors } from './operator-second-factors.js';
import {
  issueChallenge,
  LoginChallengeCaps,
  openChallenge,
  PASSKEY_CHALLENGE_TTL_MS,
  passkeyRefused,
  type RelyingParty,
  relyingPartyOf,
  spendChallenge,
} from './passkey-challenges.js';
import {
  assertionOf,
  attestationOf,
  auditRefusedRemoval,
  signedChallenge,
} from './passkey-responses.js';
import { webauthn } from './webauthn.js';

/** One passkey as an operator or admin sees it: never more than its public facts. */
export interface PasskeyView {
  readonly operator_id: string;
  readonly credential_id: string;
  readonly name: string;
  readonly created_at: string;
  readonly created_by: string;
  readonly last_used_at: string | null;
  readonly backed_up: boolean;
  readonly transports: readonly string[];
}

/** What enrolment takes: the browser's attestation, a name, and proof of a current factor. */
export interface PasskeyEnrolment {
  readonly credential: unknown;
  readonly name?: string;
  /** A current code of the operator's TOTP, when one is enrolled. */
  readonly totp?: string;
  /** Else an assertion of one of their passkeys over the enrolment's commitment. */
  readonly stepUp?: unknown;
}

/** A decision's assertion, verified and its challenge spent: what the desk stores with it. */
export interface VerifiedDecision {
  readonly id: string;
  readonly credentialId: string;
  readonly challenge: string;
  readonly row: Database['decision_assertions'];
}

export interface OperatorPasskeysOptions {
  readonly clock?: Clock;
  /** The relying party behind TLS (`passkeys.rp_id`, `passkeys.origin`); null: localhost only. */
  readonly relyingParty?: RelyingParty | null;
  /** The name authenticators show. */
  readonly rpName?: string;
  /** Bounds on outstanding sign-in challenges (defaults: LOGIN_CHALLENGE_CAPS). */
  readonly loginChallenges?: { readonly perPeer: number; readonly total: number };
}

const MAX_PASSKEYS = 20;
const NAME_MAX = 64;

function nameOf(value: string | undefined, now: Date): string {
  const name = (value ?? '').trim();
  if (name.length === 0) return `passkey ${now.toISOString().slice(0, 10)}`;
  if (name.length > NAME_MAX || /[\p{Cc}\p{Cf}]/u.test(name)) {
    throw new ToolgateError(
      'INPUT_INVALID',
      `a passkey's name is 1–${NAME_MAX} visible characters`,
      {
        problems: [problem('/name', 'not a name', 'passkey.name')],
      },
    );
  }
  return name;
}

/** What only a named operator may do: the bootstrap token is nobody in particular. */
function requireNamed(op: Operator, what: string): void {
  if (isBootstrap(op))
    throw new ToolgateError('FORBIDDEN', `the bootstrap admin token cannot ${what}`, {});
}

/** The commitment an enrolment step-up signs: this operator adds a passkey, nothing else. */
export function enrolmentSubject(op: Operator): DecisionSubject {
  return {
    kind: 'passkey_enrolment',
    id: op.id,
    tool: '',
    version: '',
    args_hash: '',
    decision: 'approve',
    approver: operatorActor(op, 'console').id,
  };
}

export class OperatorPasskeys {
  readonly #db: Kysely<Database>;
  readonly #clock: Clock;
  readonly #rp: RelyingParty | null;
  readonly #rpName: string;
  readonly #totp: Pick<OperatorSecondFactors, 'check' | 'enrolled'>;
  readonly #loginCaps: LoginChallengeCaps;

  constructor(
    db: Kysely<Database>,
    totp: Pick<OperatorSecondFactors, 'check' | 'enrolled'>,
    options: OperatorPasskeysOptions = {},
  ) {
    this.#db = db;
    this.#totp = totp;
    this.#clock = options.clock ?? systemClock;
    this.#rp = options.relyingParty ?? null;
    this.#rpName = options.rpName ?? 'toolgate';
    this.#loginCaps = new LoginChallengeCaps(options.loginChallenges);
  }

  /** Whether `operatorId` has at least one passkey. */
  async has(operatorId: string): Promise<boolean> {
    const row = await this.#db
      .selectFrom('operator_passkeys')
      .select('credential_id')
      .where('operator_id', '=', operatorId)
      .executeTakeFirst();
    return row !== undefined;
  }

  async list(operatorId: string): Promise<PasskeyView[]> {
    const rows = await this.#db
      .selectFrom('operator_passkeys')
      .selectAll()
      .where('operator_id', '=', operatorId)
      .orderBy('created_at')
      .execute();
    return rows.map((r) => ({
      operator_id: r.operator_id,
      credential_id: r.credential_id,
      name: r.name,
      created_at: r.created_at,
      created_by: r.created_by,
      last_used_at: r.last_used_at,
      backed_up: r.backed_up === 1,
      transports: JSON.parse(r.transports) as string[],
    }));
  }

  /** The options of `navigator.credentials.create` for the operator's own new passkey. */
  async registrationOptions(
    op: Operator,
    requestOrigin: string | undefined,
  ): Promise<PublicKeyCredentialCreationOptionsJSON> {
    requireNamed(op, 'enrol a passkey');
    const rp = relyingPartyOf(this.#rp, requestOrigin);
    const now = this.#clock();
    const issued = await issueChallenge(this.#db, now, {
      purpose: 'register',
      operatorId: op.id,
      rp,
    });
    const existing = await this.list(op.id);
    return (await webauthn()).generateRegistrationOptions({
      rpName: this.#rpName,
      rpID: rp.rpId,
      userName: op.id,
      userDisplayName: op.name,
      userID: new TextEncoder().encode(op.id),
      challenge: Buffer.from(issued.challenge, 'base64url'),
      timeout: PASSKEY_CHALLENGE_TTL_MS,
      attestationType: 'none',
      excludeCredentials: existing.map((p) => ({ id: p.credential_id })),
      // Discoverable, so a sign-in needs no user name first; verified, so it is a second factor.
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    });
  }

  /**
   * Stores the operator's own new passkey, after proving a current second factor: a TOTP code
   * when one is enrolled, else an assertion of an existing passkey. An account with neither is
   * refused (an admin enrols a TOTP first: the first factor is never self-made). Audited.
   */
  async register(
    op: Operator,
    input: PasskeyEnrolment,
    via: Actor['via'] = 'console',
  ): Promise<PasskeyView> {
    requireNamed(op, 'enrol a passkey');
    const now = this.#clock();
    const name = nameOf(input.name, now);
    const attestation = attestationOf(input.credential);
    await this.#proveCurrentFactor(op, input, via);
    const challenge = await openChallenge(
      this.#db,
      now,
      signedChallenge(attestation.response.clientDataJSON),
      'register',
      op.id,
    );
    let verified: VerifiedRegistrationResponse;
    try {
      verified = await (await webauthn()).verifyRegistrationResponse({
        response: attestation,
        expectedChallenge: challenge.challenge,
        expectedOrigin: challenge.rp.origin,
        expectedRPID: challenge.rp.rpId,
        requireUserVerification: true,
      });
    } catch (err) {
      throw passkeyRefused('signature', `the new passkey does not verify: ${messageOf(err)}`);
    }
    if (!verified.verified) throw passkeyRefused('signature', 'the new passkey does not verify');
    await spendChallenge(this.#db, now, challenge.challenge);
    const info = verified.registrationInfo;
    const actor = operatorActor(op, via);
    await this.#db.transaction().execute(async (trx) => {
      const count = await trx
        .selectFrom('operator_passkeys')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('operator_id', '=', op.id)
        .executeTakeFirst();
      if (Number(count?.n ?? 0) >= MAX_PASSKEYS) {
        throw new ToolgateError(
          'FORBIDDEN',
          `an operator holds at most ${MAX_PASSKEYS} passkeys; remove one first`,
          {},
        );
      }
      await trx
        .insertInto('operator_passkeys')
        .values({
          credential_id: info.credential.id,
          operator_id: op.id,
          name,
          public_key: Buffer.from(info.credential.publicKey).toString('base64url'),
          counter: info.credential.counter,
          transports: JSON.stringify(info.credential.transports ?? []),
          aaguid: info.aaguid,
          backed_up: info.credentialBackedUp ? 1 : 0,
          rp_id: challenge.rp.rpId,
          created_at: now.toISOString(),
          created_by: actor.id,
          last_used_at: null,
        })
        .execute();
      await appendEvent(trx, actor, now, {
        action: 'passkey.enrolled',
        subject: `operator:${op.id}`,
        // The public key too: a decision it signed still verifies after the passkey is removed.
        details: {
          credential_id: info.credential.id,
          name,
          rp_id: challenge.rp.rpId,
          public_key: Buffer.from(info.credential.publicKey).toString('base64url'),
        },
      });
    });
    const view = (await this.list(op.id)).find((p) => p.credential_id === info.credential.id);
    if (!view) throw new Error('an enrolled passkey vanished');
    return view;
  }

  async #proveCurrentFactor(op: Operator, input: PasskeyEnrolment, via: Actor['via']) {
    if (await this.#totp.enrolled(op.id)) {
      if (typeof input.totp !== 'string' || input.totp.trim() === '') {
        throw passkeyRefused(
          'no_second_factor',
          'enrolling a passkey needs a current code of your TOTP',
        );
      }
      await this.#totp.check(op.id, input.totp.trim(), 'passkey.enrol');
      return;
    }
    if (await this.has(op.id)) {
      if (input.stepUp === undefined) {
        throw passkeyRefused(
          'no_second_factor',
          'enrolling another passkey needs one of your passkeys first',
        );
      }
      await this.verifyDecision(op, enrolmentSubject(op), input.stepUp, via);
      return;
    }
    throw passkeyRefused(
      'no_second_factor',
      'enrolling a passkey needs a current second factor, and this account has none: an admin enrols a TOTP first (toolgate approvers enroll)',
    );
  }

  /**
   * Removes one passkey: the operator's own, or anyone's by an admin. Audited; an unknown
   * credential is NOT_FOUND (the same answer for another operator's).
   */
  async remove(
    by: Operator,
    operatorId: string,
    credentialId: string,
    via: Actor['via'] = 'library',
  ): Promise<{ operator_id: string; credential_id: string; removed: true }> {
    const own = !isBootstrap(by) && by.id === operatorId;
    if (!own && !isBootstrap(by) && !hasRole(by, 'admin')) {
      await auditRefusedRemoval(this.#db, this.#clock(), by, operatorId, via);
      throw new ToolgateError('FORBIDDEN', `only an admin may remove another operator's passkey`, {
        roles: ['admin'],
      });
    }
    const now = this.#clock();
    const actor = operatorActor(by, via);
    await this.#db.transaction().execute(async (trx) => {
      const done = await trx
        .deleteFrom('operator_passkeys')
        .where('operator_id', '=', operatorId)
        .where('credential_id', '=', credentialId)
        .executeTakeFirst();
      if (Number(done.numDeletedRows) !== 1)
        throw new ToolgateError(
          'NOT_FOUND',
          `operator ${operatorId} has no passkey ${credentialId}`,
          {},
        );
      await appendEvent(trx, actor, now, {
        action: 'passkey.removed',
        subject: `operator:${operatorId}`,
        details: { credential_id: credentialId },
      });
    });
    return { operator_id: operatorId, credential_id: credentialId, removed: true };
  }

  /**
   * Sign-in options: one challenge for whoever answers it (discoverable, so no user is named).
   * Nobody is signed in yet, so what they may leave outstanding is bounded: per peer address (this
   * replica's count) and in all (the store's count, every replica's); over either, RATE_LIMITED.
   */
  async loginOptions(
    requestOrigin: string | undefined,
    peer = 'unknown',
  ): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const rp = relyingPartyOf(this.#rp, requestOrigin);
    const now = this.#clock();
    await this.#loginCaps.admit(this.#db, now, peer);
    const issued = await issueChallenge(this.#db, now, {
      purpose: 'login',
      operatorId: null,
      rp,
    });
    return (await webauthn()).generateAuthenticationOptions({
      rpID: rp.rpId,
      challenge: Buffer.from(issued.challenge, 'base64url'),
      timeout: PASSKEY_CHALLENGE_TTL_MS,
      userVerification: 'required',
    });
  }

  /** A sign-in's second factor: an assertion of one of `operatorId`'s passkeys, once. */
  async verifyLogin(operatorId: string, answer: unknown): Promise<void> {
    const assertion = assertionOf(answer);
    const now = this.#clock();
    const challenge = await openChallenge(
      this.#db,
      now,
      signedChallenge(assertion.response.clientDataJSON),
      'login',
      operatorId,
    );
    await this.#checkSignature(operatorId, assertion, challenge.challenge, challenge.rp, now);
  }

  /**
   * Options of `navigator.credentials.get` for one decision: the challenge is the hash of its
   * commitment (the subject, a fresh nonce, an expiry), stored so the answer can be checked.
   */
  async decisionOptions(
    op: Operator,
    subject: DecisionSubject,
    requestOrigin: string | undefined,
  ): Promise<PublicKeyCredentialRequestOptionsJSON & { commitment: DecisionCommitment }> {
    requireNamed(op, 'decide with a passkey');
    const rp = relyingPartyOf(this.#rp, requestOrigin);
    const now = this.#clock();
    const passkeys = await this.list(op.id);
    if (passkeys.length === 0) {
      throw passkeyRefused(
        'unknown_credential',
        `operator ${op.id} has no passkey; enrol one on the Passkeys page`,
      );
    }
    const expiresAt = new Date(now.getTime() + PASSKEY_CHALLENGE_TTL_MS).toISOString();
    const commitment = decisionCommitment(
      subject,
      randomBytes(32).toString('base64url'),
      expiresAt,
    );
    const challenge = decisionChallenge(commitment);
    await issueChallenge(this.#db, now, {
      purpose: 'decision',
      operatorId: op.id,
      rp,
      challenge,
      commitment: canonicalJson(commitment),
      expiresAt,
    });
    const options = await (await webauthn()).generateAuthenticationOptions({
      rpID: rp.rpId,
      challenge: Buffer.from(challenge, 'base64url'),
      timeout: PASSKEY_CHALLENGE_TTL_MS,
      userVerification: 'required',
      allowCredentials: passkeys.map((p) => ({
        id: p.credential_id,
        transports: [...p.transports],
      })),
    });
    return { ...options, commitment };
  }

  /** Options for the step-up that enrols another passkey when the operator has no TOTP. */
  enrolmentOptions(op: Operator, requestOrigin: string | undefined) {
    return this.decisionOptions(op, enrolmentSubject(op), requestOrigin);
  }

  /**
   * Checks an assertion for exactly this decision and spends its challenge: refused (and audited
   * `passkey.refused`) when it answers no challenge of this operator's, one spent or expired, one
   * issued for another decision (`differs` says what), or does not verify. Nothing is stored
   * here: the desk stores `row` in the decision's transaction (recordIn).
   */
  async verifyDecision(
    op: Operator,
    subject: DecisionSubject,
    answer: unknown,
    via: Actor['via'],
  ): Promise<VerifiedDecision> {
    requireNamed(op, 'decide with a passkey');
    const now = this.#clock();
    try {
      return await this.#verifyDecision(op, subject, answer, now);
    } catch (err) {
      if (isToolgateError(err) && err.code === 'PASSKEY_REFUSED') {
        const details = err.details as { reason: string; differs?: string[] };
        await appendEvent(this.#db, operatorActor(op, via), now, {
          action: 'passkey.refused',
          subject: `${subject.kind}:${subject.id}`,
          details: { ...details, message: err.message },
        });
      }
      throw err;
    }
  }

  async #verifyDecision(
    op: Operator,
    subject: DecisionSubject,
    answer: unknown,
    now: Date,
  ): Promise<VerifiedDecision> {
    const assertion = assertionOf(answer);
    const signed = signedChallenge(assertion.response.clientDataJSON);
    const challenge = await openChallenge(this.#db, now, signed, 'decision', op.id);
    const committed = JSON.parse(challenge.commitment ?? 'null') as DecisionCommitment | null;
    if (!committed || decisionChallenge(committed) !== challenge.challenge)
      throw passkeyRefused('unknown_challenge', 'the passkey answered no decision challenge');
    const differs = subjectDifferences(committed, subject);
    if (differs.length > 0) {
      throw passkeyRefused(
        'other_decision',
        `this passkey assertion was made for another decision (${committed.kind} ${committed.id}); it differs in ${differs.join(', ')}: nothing was decided`,
        differs,
      );
    }
    const key = await this.#checkSignature(
      op.id,
      assertion,
      challenge.challenge,
      challenge.rp,
      now,
    );
    return {
      id: timeOrderedId('pka_', now.getTime()),
      credentialId: assertion.id,
      challenge: challenge.challenge,
      row: {
        id: '',
        kind: subject.kind,
        subject_id: subject.id,
        approver_id: subject.approver,
        credential_id: assertion.id,
        public_key: key,
        commitment: canonicalJson(committed),
        challenge: challenge.challenge,
        authenticator_data: assertion.response.authenticatorData,
        client_data_json: assertion.response.clientDataJSON,
        signature: assertion.response.signature,
        user_handle: assertion.response.userHandle ?? null,
        rp_id: challenge.rp.rpId,
        origin: challenge.rp.origin,
        at: now.toISOString(),
      },
    };
  }

  /**
   * Verifies the signature with the operator's stored passkey and spends the challenge, then
   * moves the passkey's counter on. Answers the public key that verified it (base64url).
   */
  async #checkSignature(
    operatorId: string,
    assertion: ReturnType<typeof assertionOf>,
    challenge: string,
    rp: RelyingParty,
    now: Date,
  ): Promise<string> {
    const passkey = await this.#db
      .selectFrom('operator_passkeys')
      .selectAll()
      .where('credential_id', '=', assertion.id)
      .where('operator_id', '=', operatorId)
      .executeTakeFirst();
    if (!passkey)
      throw passkeyRefused('unknown_credential', `operator ${operatorId} has no such passkey`);
    let verified: VerifiedAuthenticationResponse;
    try {
      verified = await (await webauthn()).verifyAuthenticationResponse({
        response: assertion,
        expectedChallenge: challenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.rpId,
        credential: {
          id: passkey.credential_id,
          publicKey: Buffer.from(passkey.public_key, 'base64url'),
          counter: Number(passkey.counter),
        },
        requireUserVerification: true,
      });
    } catch (err) {
      throw passkeyRefused('signature', `the passkey assertion does not verify: ${messageOf(err)}`);
    }
    if (!verified.verified)
      throw passkeyRefused('signature', 'the passkey assertion does not verify');
    await spendChallenge(this.#db, now, challenge);
    await this.#db
      .updateTable('operator_passkeys')
      .set({
        counter: Math.max(Number(passkey.counter), verified.authenticationInfo.newCounter),
        last_used_at: now.toISOString(),
      })
      .where('credential_id', '=', passkey.credential_id)
      .execute();
    return passkey.public_key;
  }

  /** Stores a verified decision's assertion in the decision's own transaction. */
  async recordIn(trx: Transaction<Database>, verified: VerifiedDecision): Promise<void> {
    await trx
      .insertInto('decision_assertions')
      .values({ ...verified.row, id: verified.id })
      .execute();
  }
}

/** A verifier's words, bounded: they say which check failed, never echo the input. */
function messageOf(err: unknown): string {
  return err instanceof Error ? err.message.slice(0, 200) : 'unknown error';
}
