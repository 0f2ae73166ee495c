/**
 * @module Security reviews of tool definitions (C1): the pending review a registration opens, the
 * reviewer rules, and the read side (the reviewers' queue, a version's review). A review covers
 * exactly one definition hash; a changed definition is another row, so a decision never carries
 * over (docs/architecture.md §8).
 */
import { randomBytes } from 'node:crypto';
import { type Kysely, type SqlBool, sql, type Transaction } from 'kysely';
import {
  type Actor,
  decodeCursor,
  type ErrorDetails,
  isToolgateError,
  type Page,
  type PageRequest,
  pageFromRows,
  pageLimit,
  ToolgateError,
} from '../../core/index.js';
import {
  appendEvent,
  type Database,
  LOCK_CLASSES,
  lockKeyIn,
  type SecurityReviewRow,
} from '../../records/store/index.js';
import {
  apartFrom,
  BOOTSTRAP_ACTOR_ID,
  hasRole,
  isBootstrap,
  type NotApart,
  type Operator,
  operatorActor,
} from '../operators/index.js';
import { unreviewedLaunchChangers } from './launch-changers.js';
import { needsReview, type ReviewReason } from './security-review-policy.js';
import type { AccessTier, Provenance, ToolDefinition } from './tool-definition.js';

export const REVIEW_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];
export type ReviewDecision = Exclude<ReviewStatus, 'pending'>;

/** What a reviewer states: the decision, the hash of the definition they read, and why. */
export interface ReviewInput {
  readonly definition_hash: string;
  readonly decision: ReviewDecision;
  readonly notes: string;
}

/** One security review as the queue, the register and the REST routes show it. */
export interface SecurityReviewView {
  readonly id: string;
  readonly tool_id: string;
  readonly version: string;
  readonly access_tier: AccessTier;
  readonly provenance: Provenance;
  readonly owner: string;
  readonly definition_hash: string;
  readonly reasons: ReviewReason[];
  readonly status: ReviewStatus;
  /** Actor id of whoever registered the definition. */
  readonly registered_by: string;
  readonly registered_at: string;
  /** Actor id of the approver who decided (`operator:<id>`); null while pending. */
  readonly reviewer: string | null;
  readonly reviewed_at: string | null;
  readonly notes: string | null;
}

export const MAX_REVIEW_NOTES = 4000;

/**
 * Reviews one registrant may have waiting at once. Each pending review is a person's attention
 * and a notice to every reviewer: past this many, the registrant's next definition that needs a
 * review is refused (RATE_LIMITED, `review.pending_cap`) until reviewers have decided some.
 */
export const MAX_PENDING_REVIEWS_PER_REGISTRANT = 50;

/** Opens the pending review of a just-registered definition, in the registration's transaction. */
export async function openReviewIn(
  trx: Transaction<Database>,
  review: {
    readonly toolId: string;
    readonly version: string;
    readonly definitionHash: string;
    readonly reasons: readonly ReviewReason[];
    readonly goLive: boolean;
    readonly registeredBy: string;
    readonly at: string;
  },
): Promise<string> {
  // Counted under the registrant's key: concurrent registrations on replicas cannot pass it.
  await lockKeyIn(trx, LOCK_CLASSES.reviewQueue, review.registeredBy);
  // What the pending queue shows: a draft retired before its review waits for nobody.
  const waiting = await trx
    .selectFrom('security_reviews as r')
    .innerJoin('tool_versions as t', (j) =>
      j.onRef('t.tool_id', '=', 'r.tool_id').onRef('t.version', '=', 'r.version'),
    )
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('r.registered_by', '=', review.registeredBy)
    .where('r.status', '=', 'pending')
    .where('t.lifecycle', '=', 'draft')
    .executeTakeFirst();
  if (Number(waiting?.n ?? 0) >= MAX_PENDING_REVIEWS_PER_REGISTRANT) {
    throw new ToolgateError(
      'RATE_LIMITED',
      `${MAX_PENDING_REVIEWS_PER_REGISTRANT} reviews registered by you are waiting; register more once reviewers have decided some`,
      { rule: 'review.pending_cap', call_id: '' },
    );
  }
  const id = `rev_${randomBytes(10).toString('base64url')}`;
  await trx
    .insertInto('security_reviews')
    .values({
      id,
      tool_id: review.toolId,
      version: review.version,
      definition_hash: review.definitionHash,
      reasons: JSON.stringify(review.reasons),
      go_live: review.goLive ? 1 : 0,
      status: 'pending',
      registered_by: review.registeredBy,
      registered_at: review.at,
      reviewer: null,
      reviewed_at: null,
      notes: null,
    })
    .execute();
  return id;
}

/** The review row of exactly this definition, if one was opened. */
export async function findReviewRow(
  db: Kysely<Database> | Transaction<Database>,
  toolId: string,
  version: string,
  definitionHash: string,
): Promise<SecurityReviewRow | undefined> {
  return db
    .selectFrom('security_reviews')
    .selectAll()
    .where('tool_id', '=', toolId)
    .where('version', '=', version)
    .where('definition_hash', '=', definitionHash)
    .executeTakeFirst();
}

/** Why a reviewer rule refused: the audit record's `details.reason`. */
export type ReviewRefusalReason =
  | 'bootstrap'
  | 'not_approver'
  | 'own_registration'
  | 'token_registration'
  | 'set_up_by_registrant'
  | 'owning_team'
  | 'launch_changer';

/**
 * FORBIDDEN by a reviewer rule (checkReviewer), and which one: `details.rule` and the message name
 * it (`review.<reason>`); audited as `tool.review_refused` with `details.reason`.
 */
export class ReviewerRefused extends ToolgateError<'FORBIDDEN'> {
  readonly reason: ReviewRefusalReason;
  constructor(reason: ReviewRefusalReason, why: string) {
    super('FORBIDDEN', `security review refused (review.${reason}): ${why}`, {
      rule: `review.${reason}`,
    });
    this.reason = reason;
  }
}

/**
 * Refuses a reviewer who may not decide this review; never returns on failure. Four eyes: the
 * reviewer holds `approver`, is a person (never the shared bootstrap token), is not in the team
 * that owns the tool (an owner does not review their own work), and counts as a person apart from
 * the registrant by the rule of a four-eyes change (operators/confirmation.ts, `apartFrom`; attack
 * round 12, N1): not the registrant, nor an account the registrant set up (directly or through
 * accounts she set up) unless a confirmed decider who is not the registrant has since confirmed
 * it. A definition the bootstrap token registered is the genesis admin's own registration (one
 * secret, one person; attack round 11, F3): the genesis admin, and accounts she or the token set
 * up, count as hers. For a version an upstream MCP provider runs, the reviewer is apart, by the
 * same rule, from everyone who set the provider's launch it runs since an approved review last
 * saw it (launch-changers.ts; attack round 27, G7): whoever made the program different does not
 * approve the version that runs it. Read on `db` (the review's transaction where it writes).
 */
export async function checkReviewer(
  db: Kysely<Database> | Transaction<Database>,
  op: Operator,
  owner: string,
  registeredBy: string,
  definition: ToolDefinition,
): Promise<void> {
  const refuse = (reason: ReviewRefusalReason, why: string) => {
    throw new ReviewerRefused(reason, why);
  };
  if (isBootstrap(op)) {
    refuse('bootstrap', 'the bootstrap admin token is nobody in particular and never reviews');
  }
  if (!hasRole(op, 'approver')) {
    refuse('not_approver', `operator ${op.id} does not hold the approver role`);
  }
  if (operatorActor(op, 'library').id === registeredBy) {
    refuse(
      'own_registration',
      `operator ${op.id} registered this definition; another approver must review it`,
    );
  }
  const notApart = await apartFrom(db, op.id, registeredBy);
  if (notApart) throw notApartRefusal(op.id, registeredBy, notApart);
  if (op.teams.includes(owner)) {
    refuse('owning_team', `operator ${op.id} is in ${owner}, the team that owns this tool`);
  }
  for (const changer of await unreviewedLaunchChangers(db, definition)) {
    const notApartFromChanger = await apartFrom(db, op.id, changer);
    if (notApartFromChanger)
      throw launchChangerRefusal(op.id, changer, definition, notApartFromChanger);
  }
}

/** The refusal of reviewer `id`, who is not a person apart from `changer` (launch-changers.ts). */
function launchChangerRefusal(
  id: string,
  changer: string,
  definition: ToolDefinition,
  not: NotApart,
): ReviewerRefused {
  const provider = definition.runtime.kind === 'mcp' ? definition.runtime.provider : '';
  const who = changer === `operator:${id}` ? `operator ${id}` : changer;
  const relation =
    changer === `operator:${id}`
      ? ''
      : not.why === 'same'
        ? `; operator ${id} and ${changer} are one person (the bootstrap admin token is the genesis admin's secret)`
        : not.why === 'set_up'
          ? `; operator ${id} was set up by ${not.chain.join(' <- ')} and is not confirmed by another person`
          : `; the set-up chain of operator ${id} is too long to be checked`;
  return new ReviewerRefused(
    'launch_changer',
    `${who} changed the launch of provider ${provider} (what this version runs) and no approved review has seen that program since${relation}; another approver must review it`,
  );
}

/** The refusal of reviewer `id`, who is not a person apart from registrant `registeredBy`. */
function notApartRefusal(id: string, registeredBy: string, not: NotApart): ReviewerRefused {
  const token = registeredBy === BOOTSTRAP_ACTOR_ID;
  const reason = token ? 'token_registration' : 'set_up_by_registrant';
  const registrant = token
    ? 'the bootstrap admin token registered this definition'
    : `${registeredBy} registered this definition`;
  if (not.why === 'same') {
    return new ReviewerRefused(
      reason,
      token
        ? `${registrant}, the secret of the genesis admin operator ${id} (one secret, one person), who cannot review it; another approver must`
        : `${registrant}, and operator ${id} is a genesis admin like them: both hold the bootstrap admin token (one secret, one person); another approver must review it`,
    );
  }
  const how =
    not.why === 'chain_too_long'
      ? `the set-up chain of operator ${id} is too long to be checked`
      : not.chain.length === 1 && not.chain[0] === BOOTSTRAP_ACTOR_ID
        ? `operator ${id} was set up by the bootstrap admin token (the genesis admin's secret), so it counts as the genesis admin's account`
        : `operator ${id} was set up by ${not.chain.join(' <- ')}${token ? ' (the bootstrap admin token and the genesis admin are one person)' : ''}`;
  const confirmed =
    not.confirmedBy === null
      ? `${id} is not confirmed`
      : `${id} was confirmed by ${not.confirmedBy}, the same person`;
  return new ReviewerRefused(
    reason,
    `${registrant}, and ${how}; ${confirmed}, so the two are not two people. Have another confirmed approver or admin, who is not the registrant, confirm ${id} (toolgate operators confirm ${id}), or have an approver the registrant did not set up review it`,
  );
}

/**
 * The handler a review's refusals pass through (`.catch`): throws the error on, and first, when a
 * reviewer rule refused (ReviewerRefused), audits it (INVARIANTS 14, whichever front asked): one
 * `tool.review_refused`, actor who tried, subject the tool version, details edge, reason,
 * decision and message. Written on `db`, outside the refused review's transaction, so the
 * attempt changes nothing else. Other errors pass through unrecorded. Never returns.
 */
export function auditReviewRefusal(
  db: Kysely<Database>,
  clock: () => Date,
  actor: Actor,
  toolId: string,
  version: string,
  input: Pick<ReviewInput, 'decision'>,
): (err: unknown) => Promise<never> {
  return async (err) => {
    if (err instanceof ReviewerRefused) {
      await appendEvent(db, actor, clock(), {
        action: 'tool.review_refused',
        subject: `tool:${toolId}@${version}`,
        details: {
          edge: actor.via,
          reason: err.reason,
          decision: input.decision,
          message: err.message,
        },
      });
    } else if (isToolgateError(err) && err.code === 'REVIEW_HASH_MISMATCH') {
      // A reviewer deciding a definition other than the one registered (a swapped definition).
      const { statedHash, definitionHash } = err.details as ErrorDetails['REVIEW_HASH_MISMATCH'];
      await appendEvent(db, actor, clock(), {
        action: 'tool.review_refused',
        subject: `tool:${toolId}@${version}`,
        details: {
          edge: actor.via,
          reason: 'hash_mismatch',
          decision: input.decision,
          message: err.message,
          stated_hash: statedHash,
          definition_hash: definitionHash,
        },
      });
    }
    throw err;
  };
}

/**
 * Whether approving a review of `def` needs the reviewer's second factor: always where the
 * definition needs a review at all, since each reason (restricted, privileged, third-party, open
 * source, an upstream server) makes the approval one of the weight of the four-eyes changes,
 * which all need one. Named apart so that a future, lighter review reason must choose.
 */
export function reviewNeedsStepUp(def: Parameters<typeof needsReview>[0]): boolean {
  return needsReview(def);
}

/**
 * A front's review is a person's decision made through a credential (REST, CLI, console): it
 * needs the step-up. The in-process library and system paths (an embedding host, `serve --demo`'s
 * seed) hold the database and the master key already and are not asked.
 */
export function reviewViaFront(via: Actor['via']): boolean {
  return via === 'rest' || via === 'cli' || via === 'console';
}

/** The read side of security reviews: the reviewers' queue and one version's reviews. */
export class SecurityReviewDesk {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * One page of reviews of one status, newest registration first. `pending` lists only drafts
   * still waiting (a draft retired before its review leaves the queue).
   */
  async page(
    status: ReviewStatus | undefined,
    request: PageRequest = {},
  ): Promise<Page<SecurityReviewView>> {
    const limit = pageLimit(request.limit);
    let q = this.#db
      .selectFrom('security_reviews as r')
      .innerJoin('tool_versions as t', (j) =>
        j.onRef('t.tool_id', '=', 'r.tool_id').onRef('t.version', '=', 'r.version'),
      )
      .selectAll('r')
      .select(['t.access_tier', 't.provenance', 't.owner', 't.lifecycle'])
      .orderBy('r.registered_at', 'desc')
      .orderBy('r.id', 'desc')
      .limit(limit + 1);
    if (status !== undefined) q = q.where('r.status', '=', status);
    if (status === 'pending') q = q.where('t.lifecycle', '=', 'draft');
    if (request.cursor !== undefined) {
      const [at, id] = decodeCursor('reviews', request.cursor);
      // Keyset: strictly after the last row shown, in (registered_at, id) order.
      q = q.where(sql<SqlBool>`(r.registered_at, r.id) < (${String(at)}, ${String(id)})`);
    }
    const rows = (await q.execute()).map(toView);
    return pageFromRows('reviews', rows, (r) => [r.registered_at, r.id], limit);
  }

  /** How many drafts wait for a review (the console's pending count). */
  async countPending(): Promise<number> {
    const row = await this.#db
      .selectFrom('security_reviews as r')
      .innerJoin('tool_versions as t', (j) =>
        j.onRef('t.tool_id', '=', 'r.tool_id').onRef('t.version', '=', 'r.version'),
      )
      .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
      .where('r.status', '=', 'pending')
      .where('t.lifecycle', '=', 'draft')
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** One review by its id (the console's review page); REVIEW_NOT_FOUND when there is none. */
  async get(id: string): Promise<SecurityReviewView> {
    const row = await this.#db
      .selectFrom('security_reviews as r')
      .innerJoin('tool_versions as t', (j) =>
        j.onRef('t.tool_id', '=', 'r.tool_id').onRef('t.version', '=', 'r.version'),
      )
      .selectAll('r')
      .select(['t.access_tier', 't.provenance', 't.owner'])
      .where('r.id', '=', String(id))
      .executeTakeFirst();
    if (!row) throw new ToolgateError('NOT_FOUND', `no security review ${id}`, {});
    return toView(row);
  }

  /** Every review of one version, newest first (a version holds one definition, so one row). */
  async of(toolId: string, version: string): Promise<SecurityReviewView[]> {
    const rows = await this.#db
      .selectFrom('security_reviews as r')
      .innerJoin('tool_versions as t', (j) =>
        j.onRef('t.tool_id', '=', 'r.tool_id').onRef('t.version', '=', 'r.version'),
      )
      .selectAll('r')
      .select(['t.access_tier', 't.provenance', 't.owner'])
      .where('r.tool_id', '=', toolId)
      .where('r.version', '=', version)
      .orderBy('r.registered_at', 'desc')
      .execute();
    return rows.map(toView);
  }
}

export function toView(
  r: SecurityReviewRow & { access_tier: string; provenance: string; owner: string },
): SecurityReviewView {
  return {
    id: r.id,
    tool_id: r.tool_id,
    version: r.version,
    access_tier: r.access_tier as AccessTier,
    provenance: r.provenance as Provenance,
    owner: r.owner,
    definition_hash: r.definition_hash,
    reasons: JSON.parse(r.reasons) as ReviewReason[],
    status: r.status as ReviewStatus,
    registered_by: r.registered_by,
    registered_at: r.registered_at,
    reviewer: r.reviewer,
    reviewed_at: r.reviewed_at,
    notes: r.notes,
  };
}
