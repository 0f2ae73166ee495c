/**
 * @module The catalog service (C1–C3): registration in one transaction, lifecycle,
 * quarantine and release. Every change appends an event in the same transaction and bumps the
 * catalog revision so caches (discovery, later the gate) notice.
 */
import type { Transaction } from 'kysely';
import semver from 'semver';
import {
  type Actor,
  addDays,
  type Clock,
  canonicalJson,
  type Problem,
  problem,
  sha256Hex,
  systemActor,
  systemClock,
  ToolgateError,
} from '../../core/index.js';
import {
  appendEvent,
  bumpCatalogRevision,
  type Database,
  type EventBatch,
  eventSink,
  isUniqueViolation,
  readCatalogRevision,
  type Store,
  type ToolVersionRow,
} from '../../records/store/index.js';
import { hasRole, type Operator, operatorActor } from '../operators/index.js';
import { approversNeeded } from './approvers-needed.js';
import { scanDefinition } from './definition-scan.js';
import { describeProblems } from './describe-problems.js';
import { checkDestinationSets } from './destination-set-check.js';
import {
  canTransition,
  DEFAULT_MIGRATION_WINDOW_DAYS,
  effectiveLifecycle,
  isOfferable,
  MAX_MIGRATION_WINDOW_DAYS,
} from './lifecycle.js';
import { reachesOtherTeams } from './owner-reach.js';
import { recordReviewIn } from './review-record.js';
import {
  type ReviewPasskeyOptions,
  type ReviewPasskeyRequest,
  type ReviewPasskeys,
  type ReviewSecondFactors,
  reviewPasskeyOptions,
  reviewStepUp,
  stepUpNeeded,
  stepUpRequired,
} from './review-step-up.js';
import { findBreakingChanges, isMajorBump } from './schema-compat.js';
import {
  auditReviewRefusal,
  checkReviewer,
  findReviewRow,
  MAX_REVIEW_NOTES,
  openReviewIn,
  REVIEW_STATUSES,
  type ReviewInput,
  type SecurityReviewView,
  toView,
} from './security-review.js';
import {
  needsReview,
  type ReviewReason,
  reviewReasons,
  selfRegistrable,
} from './security-review-policy.js';
import type { LifecycleState, ToolDefinition } from './tool-definition.js';
import {
  type Executor,
  findVersion,
  findVersions,
  listRows,
  offerableRows,
  type ToolVersionDetail,
  type ToolVersionSummary,
  toDetail,
  toSummary,
} from './tool-repository.js';
import {
  alreadyChecked,
  checkToolDefinition,
  type DefinitionCheck,
} from './validate-definition.js';

export { describeProblems } from './describe-problems.js';

export interface RegisterOptions {
  /**
   * Registered versions start active unless `draft` is asked for, or the definition needs a
   * security review (security-review-policy.ts): then it is a draft until an approver reviews it.
   */
  readonly initialState?: 'active' | 'draft';
  /**
   * The person registering, where one is known (REST, apply). An operator without `admin` may
   * register only what an owner may self-register, for one of their teams. Library and CLI
   * callers on the host pass none and are held to the review rules alone.
   */
  readonly operator?: Operator;
  /** Gathers the events to append with the batch's (apply -f); the caller flushes it. */
  readonly events?: EventBatch;
}

export type RegisterOutcome = 'created' | 'unchanged';

export interface RegisterResult {
  readonly outcome: RegisterOutcome;
  readonly tool: ToolVersionDetail;
  /** Set when the tool waits for approvers before it can be activated. */
  readonly changeId?: string;
  /** Set when the definition waits for a security review before it can be activated. */
  readonly review?: { readonly id: string; readonly reasons: readonly string[] };
}

/** A recorded security review, and what it did to the tool. */
export interface ReviewResult {
  readonly review: SecurityReviewView;
  readonly tool: ToolVersionDetail;
  /** Set when the approved tool now waits for its four-eyes change (irreversible tools). */
  readonly changeId?: string;
}

/** Opens the change request that will activate a gated tool (wired to the change desk). */
export type ChangeRequester = (
  trx: Transaction<Database>,
  tool: { toolId: string; version: string },
  required: number,
  /** Whose request it is (`requested_by`: the four-eyes rule keeps them from approving it). */
  actor: Actor,
  /** Who acted when it was opened (the record's actor), when not the requester: a reviewer. */
  by?: Actor,
) => Promise<string>;

/**
 * Marks rows changed in the current write; replaced by the write's revision before it commits.
 * Never visible outside the transaction.
 */
const PENDING_REVISION = -1;

/** One catalog write transaction: what it registered so far, and whether it changed anything. */
export interface CatalogWrite {
  readonly trx: Transaction<Database>;
  changed: boolean;
  /** The catalog revision this write started from. */
  readonly revision: number;
  /** Versions this write put in quarantine, told to `onQuarantine` listeners after the commit. */
  readonly quarantined: QuarantineNotice[];
}

/** A version put in quarantine: ids and counts only (never the flagged text). */
export interface QuarantineNotice {
  readonly toolId: string;
  readonly version: string;
  readonly reason: string;
  readonly findings: number;
}

export interface CatalogOptions {
  readonly clock?: Clock;
  /**
   * Checks that need the host (a command tool's files and path roots against toolgate's data
   * folder); a problem refuses the definition like any other.
   */
  readonly hostChecks?: (definition: ToolDefinition) => readonly Problem[];
  /**
   * The operators' second factors: a review that makes a restricted, privileged or third-party
   * tool callable checks the reviewer's code here. Without it such a review made through a
   * front is refused.
   */
  readonly secondFactors?: ReviewSecondFactors;
  /**
   * The operators' passkeys: a review signed with one (its assertion checked against exactly the
   * review and verdict, stored with it), and the organisation's passkey requirement.
   */
  readonly passkeys?: ReviewPasskeys;
  /** The change desk's port; without it, gated tools are refused rather than activated. */
  readonly changeRequester?: ChangeRequester;
}

/** Registration refusal that apply() collects per document instead of throwing at the first. */
export type RegistrationRefusal = ToolgateError<
  'DEFINITION_INVALID' | 'VERSION_EXISTS' | 'BREAKING_CHANGE'
>;

export class CatalogService {
  readonly #store: Store;
  readonly #clock: Clock;

  constructor(store: Store, options: CatalogOptions = {}) {
    this.#store = store;
    this.#clock = options.clock ?? systemClock;
    this.#hostChecks = options.hostChecks ?? (() => []);
    this.#secondFactors = options.secondFactors ?? null;
    this.#passkeys = options.passkeys ?? null;
    this.#changeRequester = options.changeRequester ?? null;
  }

  readonly #secondFactors: ReviewSecondFactors | null;
  readonly #passkeys: ReviewPasskeys | null;

  readonly #hostChecks: (definition: ToolDefinition) => readonly Problem[];

  get store(): Store {
    return this.#store;
  }

  now(): Date {
    return this.#clock();
  }

  revision(): Promise<number> {
    return readCatalogRevision(this.#store.db);
  }

  /**
   * Keeps the name index current without rereading the catalog: if no other writer committed
   * between this write's start and its revision bump, the index gains this write's names.
   * Otherwise it is left stale and rebuilt on the next scan.
   */
  readonly #listeners: (() => void)[] = [];
  readonly #quarantineListeners: ((q: QuarantineNotice) => void)[] = [];
  readonly #changeRequester: ChangeRequester | null;

  /** Called after every committed catalog change made through this service (caches drop). */
  onCommit(listener: () => void): void {
    this.#listeners.push(listener);
  }

  /** Told of every version quarantined, once its write is committed (notifications). */
  onQuarantine(listener: (q: QuarantineNotice) => void): void {
    this.#quarantineListeners.push(listener);
  }

  #afterCommit({ ctx }: { ctx: CatalogWrite; revision: number }): void {
    for (const listener of this.#listeners) listener();
    for (const q of ctx.quarantined) for (const listener of this.#quarantineListeners) listener(q);
  }

  /** Registers one definition in its own transaction; a refusal leaves nothing behind. */
  async register(
    input: unknown,
    actor: Actor,
    options: RegisterOptions = {},
  ): Promise<RegisterResult> {
    return this.write((ctx) => this.registerIn(ctx, input, actor, options));
  }

  /**
   * Runs `fn` in one transaction; if it changed the catalog, bumps the revision once before the
   * commit. If `fn` throws, everything it did is rolled back.
   */
  async write<T>(fn: (ctx: CatalogWrite) => Promise<T>): Promise<T> {
    const attempt = async () => {
      let committed: { ctx: CatalogWrite; revision: number } | null = null;
      const result = await this.#store.db.transaction().execute(async (trx) => {
        const ctx: CatalogWrite = {
          trx,
          quarantined: [],
          changed: false,
          revision: await readCatalogRevision(trx),
        };
        const out = await fn(ctx);
        if (ctx.changed) {
          const revision = await bumpCatalogRevision(trx);
          // Rows this write touched carry its revision, so caches can fetch only what changed.
          await trx
            .updateTable('tool_versions')
            .set({ revision })
            .where('revision', '=', PENDING_REVISION)
            .execute();
          committed = { ctx, revision };
        }
        return out;
      });
      if (committed) this.#afterCommit(committed);
      return result;
    };
    try {
      return await attempt();
    } catch (err) {
      // Two writers raced for the same id@version: the loser runs again and now sees the
      // winner's row (unchanged, or VERSION_EXISTS), instead of failing with a raw constraint error.
      if (!isUniqueViolation(err)) throw err;
      return attempt();
    }
  }

  /**
   * Registers inside the caller's transaction (apply uses one for a whole file). Throws a
   * RegistrationRefusal; the caller decides whether the transaction rolls back.
   */
  async registerIn(
    ctx: CatalogWrite,
    input: unknown,
    actor: Actor,
    options: RegisterOptions = {},
  ): Promise<RegisterResult> {
    const { trx } = ctx;
    const prechecked = alreadyChecked(input);
    const checked = hostChecked(
      prechecked ? { ok: true as const, definition: prechecked } : checkToolDefinition(input),
      this.#hostChecks,
    );
    if (!checked.ok) {
      throw new ToolgateError(
        'DEFINITION_INVALID',
        describeProblems('tool definition', checked.problems),
        { ...idAndVersionOf(input), problems: [...checked.problems] },
      );
    }
    const definition = checked.definition;
    await checkDestinationSets(trx, definition);
    if (options.operator) checkRegistrant(options.operator, definition);
    // An owner's tool goes live on its own only when it reaches their own teams' agents alone.
    const op = options.operator;
    const otherTeams =
      op !== undefined &&
      !hasRole(op, 'admin') &&
      (await reachesOtherTeams(trx, definition, op.teams));
    const json = canonicalJson(definition);
    const hash = `sha256:${sha256Hex(json)}`;
    const now = this.#clock();

    // One read of every version of this tool serves the existence, compatibility and name checks.
    const versions = await findVersions(trx, definition.id);
    const existing = versions.find((v) => v.version === definition.version);
    if (existing) {
      if (existing.definition_hash === hash) {
        return { outcome: 'unchanged', tool: toDetail(existing, now) };
      }
      throw new ToolgateError(
        'VERSION_EXISTS',
        `${definition.id}@${definition.version} is already registered with a different definition; versions are immutable, register a new version`,
        {
          toolId: definition.id,
          version: definition.version,
          existingHash: existing.definition_hash,
          newHash: hash,
        },
      );
    }

    checkCompatibility(versions, definition);

    // The definition's own texts and hosts only, never the rest of the catalog.
    const findings = await scanDefinition(definition);
    const quarantined = findings.length > 0;
    const at = now.toISOString();
    // Tools that need approvers are registered as drafts; a change request carries them to active.
    // Tools that need a security review are drafts until it is approved; the change request, if
    // any, opens then (review first, four eyes after), so approvers never activate an unreviewed tool.
    const required = approversNeeded(definition);
    const reasons: ReviewReason[] = [
      ...reviewReasons(definition),
      ...(otherTeams ? (['other_teams'] as const) : []),
    ];
    const lifecycle: LifecycleState =
      required > 0 || reasons.length > 0 ? 'draft' : (options.initialState ?? 'active');
    const row: ToolVersionRow = {
      tool_id: definition.id,
      version: definition.version,
      name: definition.name,
      description: definition.description,
      owner: definition.owner,
      action_class: definition.action_class,
      access_tier: definition.access_tier,
      data_access: definition.data_access,
      egress_mode: definition.egress.mode,
      provenance: definition.provenance,
      tags: JSON.stringify(definition.tags),
      definition: json,
      definition_hash: hash,
      lifecycle,
      quarantined: quarantined ? 1 : 0,
      quarantine_findings: JSON.stringify(findings),
      created_at: at,
      created_by: actor.id,
      updated_at: at,
      deprecated_at: null,
      retire_at: null,
      retired_at: null,
      revision: PENDING_REVISION,
    };
    await trx.insertInto('tool_versions').values(row).execute();
    const subject = `tool:${definition.id}@${definition.version}`;
    const reviewId =
      reasons.length > 0
        ? await openReviewIn(trx, {
            toolId: definition.id,
            version: definition.version,
            definitionHash: hash,
            reasons,
            goLive: options.initialState !== 'draft',
            registeredBy: actor.id,
            at,
          })
        : undefined;
    const emit = eventSink(trx, actor, now, options.events);
    await emit({
      action: 'tool.registered',
      subject,
      details: {
        definition_hash: hash,
        lifecycle,
        quarantined,
        ...(reviewId ? { review: reviewId, review_reasons: reasons } : {}),
      },
    });
    if (quarantined) {
      await emit({
        action: 'tool.quarantined',
        subject,
        details: { reason: 'description scan', findings },
      });
      ctx.quarantined.push({
        toolId: definition.id,
        version: definition.version,
        reason: 'description scan',
        findings: findings.length,
      });
    }
    ctx.changed = true;
    let changeId: string | undefined;
    if (required > 0 && reasons.length === 0 && options.initialState !== 'draft') {
      if (!this.#changeRequester)
        throw new Error('no change requester: gated tools cannot be registered');
      // The change request appends its own events: the gathered ones go first, in order.
      await options.events?.flush(trx);
      changeId = await this.#changeRequester(
        trx,
        { toolId: definition.id, version: definition.version },
        required,
        actor,
      );
    }
    return {
      outcome: 'created',
      tool: toDetail(row, now),
      ...(changeId ? { changeId } : {}),
      ...(reviewId ? { review: { id: reviewId, reasons } } : {}),
    };
  }

  /**
   * An approver's security review of one version's definition (C1). The stated hash must be the
   * stored definition's; the reviewer is the authenticated operator (checkReviewer), recorded by
   * actor id with the decision, the hash and the notes, as a review row and an event (and so an
   * audit record) in one transaction. An approval of a draft registered to go live activates it,
   * or opens its four-eyes change where the tool needs approvers; a rejection leaves it a draft.
   * A decision is final for that hash: a changed definition is a new version and a new review.
   */
  async review(
    toolId: string,
    version: string,
    operator: Operator,
    input: ReviewInput,
    options: {
      readonly via?: Actor['via'];
      readonly totp?: unknown;
      readonly passkey?: unknown;
    } = {},
  ): Promise<ReviewResult> {
    checkReviewInput(input);
    const actor = operatorActor(operator, options.via ?? 'library');
    // A reviewer rule's refusal, before or inside the transaction, is audited outside it.
    const refused = auditReviewRefusal(this.#store.db, this.#clock, actor, toolId, version, input);
    // The step-up is checked before the transaction (a failed code stays counted) and only for
    // the definition the reviewer names; the transaction refuses any other definition.
    const { steppedUp, passkey } = await reviewStepUp(
      this.#store.db,
      { totp: this.#secondFactors, passkeys: this.#passkeys },
      { toolId, version, operator, input, via: actor.via, ...options },
    ).catch(refused);
    return this.write(async (ctx) => {
      const { trx } = ctx;
      const now = this.#clock();
      const at = now.toISOString();
      const row = await requireVersion(trx, toolId, version);
      const def = JSON.parse(row.definition) as ToolDefinition;
      // A review opened at registration (an owner's tool that reaches other teams) is decided
      // like any other, though the definition alone would need none.
      const opened = await findReviewRow(trx, toolId, version, row.definition_hash);
      if (!needsReview(def) && opened === undefined) {
        throw new ToolgateError(
          'REVIEW_STATE',
          `${toolId}@${version} is ${def.access_tier}, ${def.provenance} and runs ${def.runtime.kind}: it needs no security review`,
          { toolId, version, status: 'none' },
        );
      }
      if (input.definition_hash !== row.definition_hash) {
        throw new ToolgateError(
          'REVIEW_HASH_MISMATCH',
          `the review names ${input.definition_hash}, but ${toolId}@${version} is ${row.definition_hash}; review the stored definition`,
          {
            toolId,
            version,
            statedHash: input.definition_hash,
            definitionHash: row.definition_hash,
          },
        );
      }
      // A draft registered before reviews existed has no row yet: it is opened now, not to go live.
      let existing = opened;
      if (!existing) {
        await openReviewIn(trx, {
          toolId,
          version,
          definitionHash: row.definition_hash,
          reasons: reviewReasons(def),
          goLive: false,
          registeredBy: row.created_by,
          at,
        });
        existing = await findReviewRow(trx, toolId, version, row.definition_hash);
      }
      if (!existing) throw new Error('security review row vanished inside its transaction');
      if (existing.status !== 'pending') {
        throw new ToolgateError(
          'REVIEW_STATE',
          `${toolId}@${version} was already ${existing.status} by ${existing.reviewer ?? 'an approver'}; a decision is final for a definition, register a new version to change it`,
          { toolId, version, status: existing.status === 'approved' ? 'approved' : 'rejected' },
        );
      }
      await checkReviewer(trx, operator, row.owner, existing.registered_by, def);
      if (!steppedUp && stepUpNeeded(def, input, actor.via)) throw stepUpRequired(toolId, version);
      await recordReviewIn(trx, this.#passkeys, {
        ...{ toolId, version, existing, input, actor, now, passkey },
        hash: row.definition_hash,
      });
      let changeId: string | undefined;
      if (input.decision === 'approved' && existing.go_live === 1 && row.lifecycle === 'draft') {
        const required = approversNeeded(def);
        const registrant: Actor = { id: existing.registered_by, via: actor.via };
        if (required > 0) {
          if (!this.#changeRequester)
            throw new Error('no change requester: gated tools cannot be activated');
          const tool = { toolId, version };
          changeId = await this.#changeRequester(trx, tool, required, registrant, actor);
        } else {
          await this.transitionIn(ctx, toolId, version, 'active', actor, {});
        }
      }
      const review = await trx
        .selectFrom('security_reviews')
        .selectAll()
        .where('id', '=', existing.id)
        .executeTakeFirstOrThrow();
      return {
        review: toView({
          ...review,
          access_tier: def.access_tier,
          provenance: def.provenance,
          owner: row.owner,
        }),
        tool: toDetail(await requireVersion(trx, toolId, version), now),
        ...(changeId ? { changeId } : {}),
      };
    }).catch(refused);
  }

  /**
   * The options of `navigator.credentials.get` for deciding the pending review of exactly this
   * definition (`definition_hash`) with `decision`, by `operator` (docs/architecture.md §6): the
   * challenge commits to the review id, tool, version, definition hash, verdict and reviewer.
   */
  async reviewPasskeyOptions(request: ReviewPasskeyRequest): Promise<ReviewPasskeyOptions> {
    const { toolId, version, stated } = request;
    checkReviewInput({ ...stated, notes: '-' });
    const actor = operatorActor(request.operator, request.via ?? 'library');
    const refused = auditReviewRefusal(this.#store.db, this.#clock, actor, toolId, version, stated);
    return reviewPasskeyOptions(this.#store.db, this.#passkeys, request).catch(refused);
  }

  async list(
    filter: {
      readonly owner?: string;
      readonly lifecycle?: LifecycleState;
      readonly quarantined?: boolean;
    } = {},
  ): Promise<ToolVersionSummary[]> {
    const now = this.#clock();
    const rows = await listRows(this.#store.db, filter);
    const out = rows.map((r) => toSummary(r, now));
    return filter.lifecycle ? out.filter((t) => t.lifecycle === filter.lifecycle) : out;
  }

  /**
   * What may be offered now: per tool, its newest version that is active or deprecated (window
   * not ended) and not quarantined. The input to every session's permitted set.
   */
  async offered(): Promise<ToolVersionDetail[]> {
    const now = this.#clock();
    const newest = new Map<string, ToolVersionDetail>();
    for (const row of await offerableRows(this.#store.db)) {
      const detail = toDetail(row, now);
      if (!isOfferable(detail.lifecycle)) continue;
      const current = newest.get(detail.id);
      if (!current || semver.gt(detail.version, current.version)) newest.set(detail.id, detail);
    }
    return [...newest.values()].sort((a, b) => a.id.localeCompare(b.id));
  }

  /**
   * What may be offered now, one version per major: per tool and major, its newest version that
   * is active or deprecated (window not ended) and not quarantined (C2: during a deprecation
   * window the old major stays callable beside the new one). Sorted by id, then version.
   */
  async offeredMajors(): Promise<ToolVersionDetail[]> {
    const now = this.#clock();
    const newest = new Map<string, ToolVersionDetail>();
    for (const row of await offerableRows(this.#store.db)) {
      const detail = toDetail(row, now);
      if (!isOfferable(detail.lifecycle)) continue;
      const key = `${detail.id}@${semver.major(detail.version)}`;
      const current = newest.get(key);
      if (!current || semver.gt(detail.version, current.version)) newest.set(key, detail);
    }
    return [...newest.values()].sort(
      (a, b) => a.id.localeCompare(b.id) || semver.compare(a.version, b.version),
    );
  }

  async versions(toolId: string): Promise<ToolVersionDetail[]> {
    const now = this.#clock();
    const rows = await findVersions(this.#store.db, toolId);
    if (rows.length === 0) {
      throw new ToolgateError('TOOL_NOT_FOUND', `no tool ${toolId}`, { toolId });
    }
    return rows.map((r) => toDetail(r, now));
  }

  async get(toolId: string, version: string): Promise<ToolVersionDetail> {
    return toDetail(await requireVersion(this.#store.db, toolId, version), this.#clock());
  }

  /**
   * Activates a draft (or undoes a deprecation). A draft of a tool that needs approvers
   * (irreversible, permission-changing or privileged) activates only through its approved change.
   */
  async activate(
    toolId: string,
    version: string,
    actor: Actor,
    options: { readonly approvedChange?: string } = {},
  ): Promise<ToolVersionDetail> {
    return this.#transition(toolId, version, 'active', actor, options);
  }

  /** Deprecates with a migration window (default 30 days) after which the version retires. */
  async deprecate(
    toolId: string,
    version: string,
    actor: Actor,
    options: { readonly windowDays?: number; readonly reason?: string } = {},
  ): Promise<ToolVersionDetail> {
    const windowDays = options.windowDays ?? DEFAULT_MIGRATION_WINDOW_DAYS;
    if (!Number.isFinite(windowDays) || windowDays < 0 || windowDays > MAX_MIGRATION_WINDOW_DAYS) {
      throw new ToolgateError(
        'INPUT_INVALID',
        `the migration window must be 0–${MAX_MIGRATION_WINDOW_DAYS} days`,
        {
          problems: [
            problem('/window_days', `must be between 0 and ${MAX_MIGRATION_WINDOW_DAYS}`, 'range'),
          ],
        },
      );
    }
    return this.#transition(toolId, version, 'deprecated', actor, {
      windowDays,
      ...(options.reason !== undefined ? { reason: options.reason } : {}),
    });
  }

  /**
   * Extends a deprecated version's migration window by `days` (C2): the version stays callable,
   * with its warning, until the later date. Only a window that has not ended can be extended (a
   * retired version stays retired), and never beyond the longest window from now. Audited as
   * `tool.deprecation_extended` with both dates.
   */
  async extendDeprecation(
    toolId: string,
    version: string,
    actor: Actor,
    options: { readonly days: number; readonly reason?: string },
  ): Promise<ToolVersionDetail> {
    const days = options.days;
    if (!Number.isInteger(days) || days < 1 || days > MAX_MIGRATION_WINDOW_DAYS) {
      throw new ToolgateError(
        'INPUT_INVALID',
        `an extension must be 1–${MAX_MIGRATION_WINDOW_DAYS} whole days`,
        {
          problems: [
            problem('/days', `must be an integer from 1 to ${MAX_MIGRATION_WINDOW_DAYS}`, 'range'),
          ],
        },
      );
    }
    return this.write(async (ctx) => {
      const { trx } = ctx;
      const now = this.#clock();
      const row = await requireVersion(trx, toolId, version);
      const from = effectiveLifecycle(row.lifecycle as LifecycleState, row.retire_at, now);
      if (from !== 'deprecated' || row.retire_at === null) {
        throw new ToolgateError(
          'LIFECYCLE_INVALID',
          `${toolId}@${version} is ${from}: only a deprecated version whose window has not ended can be extended`,
          { toolId, version, from, to: 'deprecated' },
        );
      }
      const retireAt = addDays(new Date(row.retire_at), days);
      if (retireAt.getTime() > addDays(now, MAX_MIGRATION_WINDOW_DAYS).getTime()) {
        throw new ToolgateError(
          'INPUT_INVALID',
          `the window would end more than ${MAX_MIGRATION_WINDOW_DAYS} days from now`,
          { problems: [problem('/days', 'extends the window too far', 'range')] },
        );
      }
      const at = now.toISOString();
      await trx
        .updateTable('tool_versions')
        .set({ retire_at: retireAt.toISOString(), updated_at: at, revision: PENDING_REVISION })
        .where('tool_id', '=', toolId)
        .where('version', '=', version)
        .where('lifecycle', '=', 'deprecated')
        .execute();
      await appendEvent(trx, actor, now, {
        action: 'tool.deprecation_extended',
        subject: `tool:${toolId}@${version}`,
        details: {
          from_retire_at: row.retire_at,
          retire_at: retireAt.toISOString(),
          days,
          ...(options.reason !== undefined ? { reason: options.reason } : {}),
        },
      });
      ctx.changed = true;
      return toDetail(await requireVersion(trx, toolId, version), now);
    });
  }

  async retire(
    toolId: string,
    version: string,
    actor: Actor,
    options: { readonly reason?: string } = {},
  ): Promise<ToolVersionDetail> {
    return this.#transition(toolId, version, 'retired', actor, options);
  }

  async #transition(
    toolId: string,
    version: string,
    to: LifecycleState,
    actor: Actor,
    options: {
      readonly windowDays?: number;
      readonly reason?: string;
      readonly approvedChange?: string;
    },
  ): Promise<ToolVersionDetail> {
    return this.write((ctx) => this.transitionIn(ctx, toolId, version, to, actor, options));
  }

  async transitionIn(
    ctx: CatalogWrite,
    toolId: string,
    version: string,
    to: LifecycleState,
    actor: Actor,
    options: {
      readonly windowDays?: number;
      readonly reason?: string;
      readonly approvedChange?: string;
    },
  ): Promise<ToolVersionDetail> {
    {
      const { trx } = ctx;
      const now = this.#clock();
      const row = await requireVersion(trx, toolId, version);
      const from = effectiveLifecycle(row.lifecycle as LifecycleState, row.retire_at, now);
      if (from === 'draft' && to === 'active') await checkReviewed(trx, row);
      if (from === 'draft' && to === 'active' && !options.approvedChange) {
        const def = JSON.parse(row.definition) as ToolDefinition;
        if (approversNeeded(def) > 0) {
          throw new ToolgateError(
            'FORBIDDEN',
            `${toolId}@${version} is ${def.action_class}/${def.access_tier}: it becomes active only through its change request (toolgate changes approve)`,
            {},
          );
        }
      }
      if (!canTransition(from, to)) {
        throw new ToolgateError(
          'LIFECYCLE_INVALID',
          `${toolId}@${version} cannot go from ${from} to ${to}`,
          { toolId, version, from, to },
        );
      }
      const at = now.toISOString();
      const retireAt =
        to === 'deprecated'
          ? addDays(now, options.windowDays ?? DEFAULT_MIGRATION_WINDOW_DAYS).toISOString()
          : null;
      await trx
        .updateTable('tool_versions')
        .set({
          lifecycle: to,
          updated_at: at,
          deprecated_at: to === 'deprecated' ? at : to === 'retired' ? row.deprecated_at : null,
          retire_at: to === 'retired' ? row.retire_at : retireAt,
          retired_at: to === 'retired' ? at : null,
          revision: PENDING_REVISION,
        })
        .where('tool_id', '=', toolId)
        .where('version', '=', version)
        .execute();
      await appendEvent(trx, actor, now, {
        action: `tool.${to === 'active' ? 'activated' : to}`,
        subject: `tool:${toolId}@${version}`,
        details: {
          from,
          ...(retireAt ? { retire_at: retireAt } : {}),
          ...(options.reason !== undefined ? { reason: options.reason } : {}),
          ...(options.approvedChange !== undefined ? { change: options.approvedChange } : {}),
        },
      });
      ctx.changed = true;
      return toDetail(await requireVersion(trx, toolId, version), now);
    }
  }

  /** Puts a version in quarantine by hand (it stays registered, it is no longer offered). */
  async quarantine(
    toolId: string,
    version: string,
    actor: Actor,
    reason: string,
  ): Promise<ToolVersionDetail> {
    return this.#setQuarantine(toolId, version, actor, reason, true);
  }

  /** An admin's explicit release of a quarantined version; the findings stay on record. */
  async release(
    toolId: string,
    version: string,
    actor: Actor,
    reason: string,
  ): Promise<ToolVersionDetail> {
    return this.#setQuarantine(toolId, version, actor, reason, false);
  }

  async #setQuarantine(
    toolId: string,
    version: string,
    actor: Actor,
    reason: string,
    quarantined: boolean,
  ): Promise<ToolVersionDetail> {
    if (reason.trim() === '') {
      throw new ToolgateError('INPUT_INVALID', 'a reason is required', {
        problems: [problem('/reason', 'must not be empty', 'required')],
      });
    }
    return this.write((ctx) =>
      this.setQuarantineIn(ctx, toolId, version, actor, reason, quarantined),
    );
  }

  /**
   * Quarantines (or releases) inside the caller's write, so a provider refresh quarantines the
   * tools it found changed in the same transaction as it records the change.
   */
  async setQuarantineIn(
    ctx: CatalogWrite,
    toolId: string,
    version: string,
    actor: Actor,
    reason: string,
    quarantined: boolean,
  ): Promise<ToolVersionDetail> {
    {
      const { trx } = ctx;
      const now = this.#clock();
      const row = await requireVersion(trx, toolId, version);
      if ((row.quarantined === 1) === quarantined) {
        throw new ToolgateError(
          'QUARANTINE_STATE',
          `${toolId}@${version} is ${quarantined ? 'already' : 'not'} quarantined`,
          { toolId, version, quarantined: row.quarantined === 1 },
        );
      }
      await trx
        .updateTable('tool_versions')
        .set({
          quarantined: quarantined ? 1 : 0,
          updated_at: now.toISOString(),
          revision: PENDING_REVISION,
        })
        .where('tool_id', '=', toolId)
        .where('version', '=', version)
        .execute();
      await appendEvent(trx, actor, now, {
        action: quarantined ? 'tool.quarantined' : 'tool.released',
        subject: `tool:${toolId}@${version}`,
        details: { reason, findings: JSON.parse(row.quarantine_findings) as unknown },
      });
      if (quarantined) {
        const findings = JSON.parse(row.quarantine_findings) as unknown;
        ctx.quarantined.push({
          toolId,
          version,
          reason,
          findings: Array.isArray(findings) ? findings.length : 0,
        });
      }
      ctx.changed = true;
      return toDetail(await requireVersion(trx, toolId, version), now);
    }
  }

  /**
   * Persists retirements whose migration window has ended (reads already treat them as retired).
   * Returns the versions it retired; safe to run from several replicas at once.
   */
  async sweepLifecycle(): Promise<{ id: string; version: string }[]> {
    const now = this.#clock();
    const at = now.toISOString();
    return this.write(async (ctx) => {
      const { trx } = ctx;
      const due = await trx
        .selectFrom('tool_versions')
        .select(['tool_id', 'version', 'retire_at'])
        .where('lifecycle', '=', 'deprecated')
        .where('retire_at', '<=', at)
        .execute();
      const retired: { id: string; version: string }[] = [];
      for (const row of due) {
        const result = await trx
          .updateTable('tool_versions')
          .set({ lifecycle: 'retired', retired_at: at, updated_at: at, revision: PENDING_REVISION })
          .where('tool_id', '=', row.tool_id)
          .where('version', '=', row.version)
          .where('lifecycle', '=', 'deprecated')
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) === 0) continue;
        await appendEvent(trx, systemActor('lifecycle'), now, {
          action: 'tool.retired',
          subject: `tool:${row.tool_id}@${row.version}`,
          details: {
            from: 'deprecated',
            reason: 'migration window ended',
            retire_at: row.retire_at,
          },
        });
        retired.push({ id: row.tool_id, version: row.version });
      }
      if (retired.length > 0) ctx.changed = true;
      return retired;
    });
  }
}

/**
 * Refuses what this operator may not register; never returns on failure. An admin registers
 * anything (the review rules still hold); anyone else only what an owner may self-register, for a
 * team of theirs — the route's role gate decides who reaches registration at all, this decides what.
 */
function checkRegistrant(op: Operator, def: ToolDefinition): void {
  if (hasRole(op, 'admin')) return;
  const what = `${def.id}@${def.version} (${def.action_class}, ${def.access_tier}, ${def.provenance}, ${def.runtime.kind})`;
  if (!hasRole(op, 'owner')) {
    throw new ToolgateError(
      'FORBIDDEN',
      `operator ${op.id} may not register tools: registering takes the admin or owner role`,
      {},
    );
  }
  if (!selfRegistrable(def)) {
    throw new ToolgateError(
      'FORBIDDEN',
      `an owner may register only public, read-only, internal tools; ${what} needs an admin to register it and an approver to review it`,
      {},
    );
  }
  if (!op.teams.includes(def.owner)) {
    throw new ToolgateError(
      'FORBIDDEN',
      `${def.id} is owned by ${def.owner}, which is not one of operator ${op.id}'s teams (${op.teams.join(', ') || 'none'})`,
      {},
    );
  }
}

/**
 * Refuses to activate a draft that needs a security review without an approved review of exactly
 * its stored definition hash; never returns on failure.
 */
async function checkReviewed(trx: Transaction<Database>, row: ToolVersionRow): Promise<void> {
  const def = JSON.parse(row.definition) as ToolDefinition;
  const review = await findReviewRow(trx, row.tool_id, row.version, row.definition_hash);
  // The reasons the definition gives, and those its registration gave (other_teams).
  const reasons = [
    ...new Set([
      ...reviewReasons(def),
      ...(review ? (JSON.parse(review.reasons) as ReviewReason[]) : []),
    ]),
  ];
  if (reasons.length === 0) return;
  if (review?.status === 'approved') return;
  const state = review?.status === 'rejected' ? 'rejected' : 'pending';
  throw new ToolgateError(
    'REVIEW_REQUIRED',
    state === 'rejected'
      ? `${row.tool_id}@${row.version} was rejected in its security review (${review?.notes ?? ''}); it cannot be activated`
      : `${row.tool_id}@${row.version} is ${reasons.join(', ')}: it goes live only after an approver reviews definition ${row.definition_hash} (toolgate tools review)`,
    {
      toolId: row.tool_id,
      version: row.version,
      definitionHash: row.definition_hash,
      review: state,
      reasons,
    },
  );
}

function checkReviewInput(input: ReviewInput): void {
  const problems: Problem[] = [];
  if (
    typeof input.definition_hash !== 'string' ||
    !/^sha256:[0-9a-f]{64}$/.test(input.definition_hash)
  ) {
    problems.push(
      problem('/definition_hash', 'must be the sha256: hash of the definition reviewed', 'format'),
    );
  }
  const decisions: readonly string[] = REVIEW_STATUSES.filter((d) => d !== 'pending');
  if (!decisions.includes(input.decision)) {
    problems.push(problem('/decision', 'must be approved or rejected', 'enum'));
  }
  if (typeof input.notes !== 'string' || input.notes.trim() === '') {
    problems.push(problem('/notes', 'say what was reviewed and why', 'required'));
  } else if (input.notes.length > MAX_REVIEW_NOTES) {
    problems.push(problem('/notes', `at most ${MAX_REVIEW_NOTES} characters`, 'maxLength'));
  }
  if (problems.length > 0) {
    throw new ToolgateError('INPUT_INVALID', describeProblems('security review', problems), {
      problems,
    });
  }
}

/** Compares with the neighbouring versions by SemVer; a break needs a major bump. */
function checkCompatibility(versions: readonly ToolVersionRow[], definition: ToolDefinition): void {
  const older = versions.filter((v) => semver.lt(v.version, definition.version)).at(-1);
  const newer = versions.find((v) => semver.gt(v.version, definition.version));
  const pairs: [string, ToolDefinition, string, ToolDefinition][] = [];
  if (older) {
    pairs.push([
      older.version,
      JSON.parse(older.definition) as ToolDefinition,
      definition.version,
      definition,
    ]);
  }
  if (newer) {
    pairs.push([
      definition.version,
      definition,
      newer.version,
      JSON.parse(newer.definition) as ToolDefinition,
    ]);
  }
  for (const [fromVersion, from, toVersion, to] of pairs) {
    if (isMajorBump(fromVersion, toVersion)) continue;
    const breaks = findBreakingChanges(from, to);
    if (breaks.length === 0) continue;
    const problems: Problem[] = breaks.map((b) =>
      problem(b.pointer, b.message, `breaking.${b.kind}`),
    );
    throw new ToolgateError(
      'BREAKING_CHANGE',
      `${definition.id}@${toVersion} breaks the contract of ${fromVersion} without a major version bump: ${breaks.map((b) => b.message).join('; ')}`,
      {
        toolId: definition.id,
        version: definition.version,
        previousVersion: fromVersion,
        problems,
      },
    );
  }
}

/** The row of one version; TOOL_NOT_FOUND if there is none. Never returns undefined. */
async function requireVersion(
  db: Executor,
  toolId: string,
  version: string,
): Promise<ToolVersionRow> {
  const row = await findVersion(db, toolId, version);
  if (!row)
    throw new ToolgateError('TOOL_NOT_FOUND', `no tool ${toolId}@${version}`, { toolId, version });
  return row;
}

function idAndVersionOf(input: unknown): { toolId?: string; version?: string } {
  if (typeof input !== 'object' || input === null) return {};
  const rec = input as Record<string, unknown>;
  return {
    ...(typeof rec.id === 'string' ? { toolId: rec.id } : {}),
    ...(typeof rec.version === 'string' ? { version: rec.version } : {}),
  };
}

/** A definition that passed its own checks, refused after all if the host checks find problems. */
function hostChecked(
  checked: DefinitionCheck,
  hostChecks: (definition: ToolDefinition) => readonly Problem[],
): DefinitionCheck {
  if (!checked.ok) return checked;
  const problems = hostChecks(checked.definition);
  return problems.length > 0 ? { ok: false, problems } : checked;
}
