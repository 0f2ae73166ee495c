/**
 * @module Approval requests and their consumption (C8). A call that needs approval is
 * stored with its resolved form; an approver's decision issues a signed token bound to tool,
 * agent, session and the canonical hash of the arguments; a retry of exactly that call by the same
 * principal — in that run or another of its runs (a client that reconnected: approval-owner.ts) —
 * consumes the token once. Approving happens only on admin paths, never through anything an agent sends;
 * the approver is the authenticated operator deciding (docs/architecture.md §6), with a fresh TOTP
 * of their own where the call needs a step-up.
 */
import type { Kysely, Transaction } from 'kysely';
import {
  type Actor,
  type CallPreview,
  type Clock,
  type Page,
  type PageRequest,
  problem,
  type RenderedCall,
  systemClock,
  ToolgateError,
} from '../../core/index.js';
import {
  type ApprovalRow,
  appendEvent,
  type Database,
  isUniqueViolation,
} from '../../records/store/index.js';
import { type Operator, operatorActor } from '../operators/index.js';
import {
  DEFAULT_AGENT_CAPS,
  lockAgent,
  maxPendingApprovalsPerPrincipal,
  pendingApprovalsOf,
  pendingApprovalsOfPrincipal,
} from '../sessions/index.js';
import { type ApprovalOwner, approvalsOfCall, isOwnedBy, ownedApproval } from './approval-owner.js';
import {
  countPending,
  listApprovals,
  pageApprovals,
  settledApprovals,
  statusCounts,
} from './approval-reads.js';
import { highRisk, needsStepUp, pendingRequest, stateError } from './approval-rules.js';
import {
  type ApprovalScopeView,
  revokeScope,
  type ScopeCall,
  type ScopeRequest,
  type ScopeTerms,
  type ScopeUse,
  scopeDetails,
  scopeGrant,
  scopeOf,
  scopeTerms,
  useScope,
} from './approval-scopes.js';
import type { ApprovalSigner } from './approval-token.js';
import {
  type ApprovalCall,
  type ApprovalView,
  type BoundResolution,
  bindingOf,
  keyOf,
  newRequest,
  type ResolvedApproval,
  toView,
} from './approval-view.js';
import { requireApprover } from './decider.js';
import { approvalSubject } from './decision-subjects.js';
import type { OperatorSecondFactors } from './operator-second-factors.js';
import {
  assertionDetails,
  type DecisionPasskeys,
  passkeyRequiredError,
  passkeysRequired,
} from './passkey-decisions.js';
import type { VerifiedDecision } from './passkeys.js';

export { needsStepUp } from './approval-rules.js';
export type {
  ApprovalCall,
  ApprovalView,
  BoundResolution,
  ResolvedApproval,
} from './approval-view.js';

const TOKEN_TTL_S = 600;

/** How an approver approves: the second factor, a reason, the front, and an optional scope. */
export interface ApproveOptions {
  readonly totp?: string;
  readonly passkey?: unknown;
  readonly reason?: string;
  readonly via?: Actor['via'];
  /** Approve a bounded scope instead of one call (approval-scopes.ts); needs a second factor. */
  readonly scope?: ScopeRequest;
}
export const MAX_PENDING_PER_SESSION = 20;

export class ApprovalDesk {
  readonly #db: Kysely<Database>;
  readonly #signerSource: ApprovalSigner | (() => ApprovalSigner);
  #signerLoaded: ApprovalSigner | null = null;
  readonly #clock: Clock;
  /** Operators' enrolled second factors, read from the store on every check; null: none. */
  readonly #secondFactors: Pick<OperatorSecondFactors, 'check'> | null;
  /** Operators' passkeys, for decisions signed with one; null: none. */
  readonly #passkeys: DecisionPasskeys | null;
  /** Whether irreversible and permission-changing calls need a passkey (TOTP refused). */
  readonly #passkeyRequired: boolean;
  readonly #maxPendingPerAgent: number;
  readonly #maxPendingPerPrincipal: number;
  readonly #onPending: ((view: ApprovalView) => void) | undefined;
  readonly #onDecided: ((id: string) => void) | undefined;

  constructor(
    db: Kysely<Database>,
    /** The signer, or how to load it: loaded on first use, so read-only commands create no key. */
    signer: ApprovalSigner | (() => ApprovalSigner),
    options: {
      clock?: Clock;
      /** Without it no step-up can succeed, so calls that need one cannot be approved. */
      secondFactors?: Pick<OperatorSecondFactors, 'check'>;
      /** Operators' passkeys: a decision signed with one (docs/architecture.md §6). */
      passkeys?: DecisionPasskeys;
      /** Irreversible and permission-changing calls need a passkey, not a TOTP code. */
      passkeyRequired?: boolean;
      /** Pending requests one agent may hold across its sessions. */
      maxPendingPerAgent?: number;
      /**
       * Pending requests one principal of an agent (a token user, or its own keys together) may
       * hold; default the session share of `maxPendingPerAgent` (maxPendingApprovalsPerPrincipal).
       */
      maxPendingPerPrincipal?: number;
      /**
       * Told of each new pending request once it is committed (notifications). Called
       * synchronously on the call path: it must only enqueue, never wait or throw.
       */
      onPending?: (view: ApprovalView) => void;
      /**
       * Told of each approval an approver decided here, once it is committed (held calls waiting
       * for it wake at once: approval-waits.ts). Synchronous: it must only signal, never throw.
       */
      onDecided?: (id: string) => void;
    } = {},
  ) {
    this.#onPending = options.onPending;
    this.#onDecided = options.onDecided;
    this.#maxPendingPerAgent =
      options.maxPendingPerAgent ?? DEFAULT_AGENT_CAPS.maxPendingApprovalsPerAgent;
    this.#maxPendingPerPrincipal =
      options.maxPendingPerPrincipal ??
      maxPendingApprovalsPerPrincipal({
        maxPendingApprovalsPerAgent: this.#maxPendingPerAgent,
        userSessionShare: DEFAULT_AGENT_CAPS.userSessionShare,
      });
    this.#db = db;
    this.#signerSource = signer;
    this.#clock = options.clock ?? systemClock;
    this.#secondFactors = options.secondFactors ?? null;
    this.#passkeys = options.passkeys ?? null;
    this.#passkeyRequired = options.passkeyRequired ?? false;
  }

  /**
   * The approval of exactly this call — this principal (in any of its runs), tool, version and
   * canonical arguments: an approved one is consumed (its token verified and the row moved in one
   * conditional update, so two racing retries run it once); a pending one is returned, not
   * duplicated; a rejection still within its request's lifetime refuses the call again (the
   * reviewer said no to exactly this); otherwise a new request is opened.
   */
  async resolve(call: ApprovalCall, scope: ScopeCall | null = null): Promise<ResolvedApproval> {
    const now = this.#clock();
    const approved = await this.#consumeApproved(call, now);
    if (approved) return approved;
    // A scope a reviewer gave covers the call unless a reviewer rejected exactly this call.
    if (scope !== null) {
      const use = await this.#scopeUse(call, scope, now);
      if (use)
        return { kind: 'approved', approvalId: use.approvalId, approver: use.approver, scope: use };
    }
    return this.#findOrOpen(call, now);
  }

  /** The approved request of exactly this call, consumed (once, whoever races for it); or null. */
  async #consumeApproved(call: ApprovalCall, now: Date): Promise<ResolvedApproval | null> {
    for (const row of await approvalsOfCall(this.#db, keyOf(call), ['approved'])) {
      const verdict = this.#signer().verify(row.token, bindingOf(row), now);
      if (!verdict.ok) continue;
      const used = await this.#db
        .updateTable('approvals')
        .set({ status: 'consumed', consumed_at: now.toISOString() })
        .where('id', '=', row.id)
        .where('status', '=', 'approved')
        .executeTakeFirst();
      if (Number(used.numUpdatedRows) === 1)
        return { kind: 'approved', approvalId: row.id, approver: row.decided_by ?? '' };
    }
    return null;
  }

  async #scopeUse(call: ApprovalCall, scope: ScopeCall, now: Date): Promise<ScopeUse | null> {
    const rejected = await approvalsOfCall(this.#db, keyOf(call), ['rejected']);
    if (rejected.some((r) => Date.parse(r.expires_at) > now.getTime())) return null;
    return useScope(this.#db, scope, now);
  }

  /** The pending request of this call, a live rejection of it, or a new request (capped). */
  async #findOrOpen(call: ApprovalCall, now: Date): Promise<ResolvedApproval> {
    // Finding, counting and creating requests happen under the agent's row lock, so parallel
    // calls (in one run or in several runs of the principal) neither duplicate a request nor
    // slip past a cap.
    let created: ApprovalRow | null = null;
    const outcome = await this.#db.transaction().execute(async (trx) => {
      await lockAgent(trx, call.agentId);
      const open = await approvalsOfCall(trx, keyOf(call), ['pending', 'rejected']);
      const alive = open.filter((r) => Date.parse(r.expires_at) > now.getTime());
      const live = alive.find((r) => r.status === 'pending');
      if (live) return { kind: 'pending' as const, approvalId: live.id };
      const rejected = alive.findLast((r) => r.status === 'rejected');
      if (rejected)
        return { kind: 'rejected' as const, approvalId: rejected.id, reason: rejected.reason };
      const full = await this.#fullScope(trx, call, now);
      if (full !== null) return { kind: 'too_many' as const, scope: full };
      const row = newRequest(call, now);
      await trx.insertInto('approvals').values(row).execute();
      created = row;
      return { kind: 'pending' as const, approvalId: row.id, created: true as const };
    });
    if (created && this.#onPending) {
      try {
        this.#onPending(toView(created, now));
      } catch {
        // A notification never fails the call it is about.
      }
    }
    return outcome;
  }

  /**
   * Attaches a preview's outcome to a request still pending (docs/architecture.md §3, "Previews"):
   * the stored rendered call gains `preview`; nothing else of the request changes, and a request
   * decided meanwhile keeps what its decider saw. Returns whether it was attached.
   */
  async attachPreview(id: string, preview: CallPreview): Promise<boolean> {
    const row = await this.#db
      .selectFrom('approvals')
      .select(['rendered'])
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    if (!row) return false;
    const rendered = { ...(JSON.parse(row.rendered) as RenderedCall), preview };
    const done = await this.#db
      .updateTable('approvals')
      .set({ rendered: JSON.stringify(rendered) })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where('rendered', '=', row.rendered)
      .executeTakeFirst();
    return Number(done.numUpdatedRows) === 1;
  }

  /**
   * Which bound a new request of `call` would pass, in `trx` (null: none). Takes the agent's row
   * lock for the rest of the transaction, so parallel calls cannot slip past any of them.
   */
  async #fullScope(
    trx: Transaction<Database>,
    call: ApprovalCall,
    now: Date,
  ): Promise<'session' | 'agent' | 'principal' | null> {
    // Reviewers are the scarce resource: a session cannot flood them with requests.
    const open = await trx
      .selectFrom('approvals')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('session_id', '=', call.sessionId)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    if (Number(open?.n ?? 0) >= MAX_PENDING_PER_SESSION) return 'session';
    // Nor can one agent through many sessions: reviewers' queue is shared by every agent.
    await lockAgent(trx, call.agentId);
    if ((await pendingApprovalsOf(trx, call.agentId, now)) >= this.#maxPendingPerAgent)
      return 'agent';
    // Nor one principal of a multi-user agent: the others keep their share (attack round 14,
    // Q2). Counted under the same agent lock, so parallel calls cannot slip past it either.
    if (
      (await pendingApprovalsOfPrincipal(trx, call.agentId, call.tokenUser, now)) >=
      this.#maxPendingPerPrincipal
    )
      return 'principal';
    return null;
  }

  /**
   * The approval a retried call names (its sealed `requestState`, or the approval a held call
   * waited for): consumes it if approved, else says why not. Never opens a request and never
   * consumes another one: the call runs only on the approval it names, once, and only when that
   * approval belongs to the caller's principal (in any of its runs) and covers exactly this tool,
   * version and arguments. One primary-key read (and the consuming update).
   */
  async resolveBound(approvalId: string, call: ApprovalCall): Promise<BoundResolution> {
    const now = this.#clock();
    const row = await ownedApproval(this.#db, approvalId);
    // Named for this call: anything else is another call's, or another principal's.
    if (
      !row ||
      !isOwnedBy(row, keyOf(call)) ||
      row.tool_id !== call.toolId ||
      row.tool_version !== call.toolVersion ||
      row.args_hash !== call.argsHash
    )
      return { kind: 'refused', why: 'mismatch' };
    const status = toView(row, now).status;
    switch (status) {
      case 'pending':
        return { kind: 'pending', approvalId };
      case 'rejected':
        return { kind: 'rejected', reason: row.reason };
      case 'expired':
        return { kind: 'refused', why: 'expired' };
      case 'consumed':
        return { kind: 'refused', why: 'used' };
      case 'withdrawn':
        return { kind: 'refused', why: 'withdrawn' };
      case 'approved': {
        if (!this.#signer().verify(row.token, bindingOf(row), now).ok)
          return { kind: 'refused', why: 'expired' };
        const used = await this.#db
          .updateTable('approvals')
          .set({ status: 'consumed', consumed_at: now.toISOString() })
          .where('id', '=', row.id)
          .where('status', '=', 'approved')
          .executeTakeFirst();
        // Two retries racing with one state: exactly one moves the row, the other ran nothing.
        if (Number(used.numUpdatedRows) !== 1) return { kind: 'refused', why: 'used' };
        return { kind: 'approved', approvalId: row.id, approver: row.decided_by ?? '' };
      }
    }
  }

  /**
   * The options of `navigator.credentials.get` for approving exactly this pending call with a
   * passkey: the challenge commits to its id, tool, version, argument hash and the decision.
   */
  async passkeyOptions(
    id: string,
    operator: Operator,
    requestOrigin: string | undefined,
    scope?: ScopeRequest,
  ) {
    requireApprover(operator, `approve ${id}`);
    const now = this.#clock();
    const row = await this.#pending(id, now);
    if (!this.#passkeys)
      throw new ToolgateError('FORBIDDEN', 'this gateway checks no passkeys', {});
    const approver = operatorActor(operator, 'console').id;
    const terms = scope === undefined ? null : scopeTerms(scope, now);
    // A scope this approval cannot have is refused before anyone signs it.
    if (terms !== null) await scopeGrant(this.#db, row, terms, approver, now);
    const subject = approvalSubject(row, approver, 'approve', terms ?? undefined);
    const options = await this.#passkeys.decisionOptions(operator, subject, requestOrigin);
    // The terms signed, `until` exact: the form sends them back with the assertion.
    return terms === null ? options : { ...options, scope: terms };
  }

  /**
   * Admin path only: `operator` is who the request authenticated as, never a name it stated. They
   * must hold the approver role; a call that needs a step-up (see `needsStepUp`) needs a fresh
   * TOTP of theirs or an assertion of their passkey over exactly this decision (`passkey`: the
   * browser's answer; checked, stored with the decision and named in its audit record first,
   * so a replayed one is refused as used whatever the approval's state). The decision is recorded
   * as `operatorActor(operator)`.
   */
  async approve(
    id: string,
    operator: Operator,
    options: ApproveOptions = {},
  ): Promise<ApprovalView> {
    requireApprover(operator, `approve ${id}`);
    const approver = operatorActor(operator, options.via ?? 'library');
    const now = this.#clock();
    const terms = options.scope === undefined ? null : scopeTerms(options.scope, now);
    const passkey =
      options.passkey === undefined ? null : await this.#passkeyProof(id, operator, options, terms);
    const row = await this.#pending(id, now);
    // Every refusal of the scope before the second factor is spent.
    const scope = terms === null ? null : await scopeGrant(this.#db, row, terms, approver.id, now);
    const totpStep =
      passkey === null ? await this.#stepUp(row, operator, options, scope !== null, now) : null;
    const { token, claims } = this.#signer().issue(bindingOf(row), TOKEN_TTL_S, now);
    const approveInTransaction = this.#db.transaction().execute(async (trx) => {
      const done = await trx
        .updateTable('approvals')
        .set({
          status: 'approved',
          decided_at: now.toISOString(),
          decided_by: approver.id,
          reason: options.reason ?? null,
          token,
          token_id: claims.tokenId,
          totp_step: totpStep,
        })
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      if (Number(done.numUpdatedRows) !== 1) throw stateError(id, 'pending');
      if (passkey) await this.#passkeys?.recordIn(trx, passkey);
      if (scope) await trx.insertInto('approval_scopes').values(scope).execute();
      await appendEvent(trx, approver, now, {
        action: 'approval.approved',
        subject: `approval:${id}`,
        details: {
          second_factor: row.second_factor === 1,
          step_up: totpStep !== null || passkey !== null,
          ...assertionDetails(passkey),
          ...(scope ? { scope: scopeDetails(scope) } : {}),
        },
      });
    });
    try {
      await approveInTransaction;
    } catch (err) {
      // Two approvals racing with one code: the unique (approver, step) index lets one through.
      if (isUniqueViolation(err)) {
        throw new ToolgateError('INPUT_INVALID', 'second factor replayed', {
          problems: [problem('/totp', 'second factor replayed', 'approval.totp')],
        });
      }
      throw err;
    }
    this.#decided(id);
    return this.get(id);
  }

  /**
   * The approver's TOTP step where the decision needs a step-up (the call's class or tool asks
   * for one, or the approval carries a scope: a standing permission needs the second factor);
   * null where none is needed. Checked before the transaction: a failed code stays counted.
   */
  async #stepUp(
    row: ApprovalRow,
    operator: Operator,
    options: ApproveOptions,
    scoped: boolean,
    now: Date,
  ): Promise<number | null> {
    if (!needsStepUp(row) && !scoped) return null;
    const approver = operatorActor(operator, options.via ?? 'library');
    if (highRisk(row.action_class) && (await passkeysRequired(this.#db, this.#passkeyRequired)))
      throw await passkeyRequiredError(this.#db, approver, now, 'approval', row.id);
    if (!this.#secondFactors) {
      throw new ToolgateError(
        'FORBIDDEN',
        `approval ${row.id} needs a second factor and this gateway checks none`,
        {},
      );
    }
    return this.#secondFactors.check(operator.id, options.totp, 'approval.totp');
  }

  /**
   * Admin path only, by an approver as for `approve`: ends the scope approval `id` was given with
   * (audited `approval.scope_revoked`); the next call it would have covered waits again.
   */
  async revokeScope(
    id: string,
    operator: Operator,
    reason: string,
    via: Actor['via'] = 'library',
  ): Promise<ApprovalView> {
    requireApprover(operator, `revoke the scope of ${id}`);
    await revokeScope(this.#db, id, operatorActor(operator, via), reason, this.#clock());
    return this.get(id);
  }

  /** The passkey's assertion over approving `id`, checked against the stored call (any state). */
  async #passkeyProof(
    id: string,
    operator: Operator,
    options: { passkey?: unknown; via?: Actor['via'] },
    scope: ScopeTerms | null,
  ): Promise<VerifiedDecision> {
    if (!this.#passkeys)
      throw new ToolgateError('FORBIDDEN', 'this gateway checks no passkeys', {});
    const row = await this.#db
      .selectFrom('approvals')
      .select(['id', 'tool_id', 'tool_version', 'args_hash'])
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw new ToolgateError('NOT_FOUND', `no approval ${id}`, {});
    const subject = approvalSubject(
      row,
      operatorActor(operator, 'console').id,
      'approve',
      scope ?? undefined,
    );
    return this.#passkeys.verifyDecision(
      operator,
      subject,
      options.passkey,
      options.via ?? 'library',
    );
  }

  /** Admin path only, by an approver as for `approve`; a rejection needs no step-up. */
  async reject(
    id: string,
    operator: Operator,
    reason: string,
    via: Actor['via'] = 'library',
  ): Promise<ApprovalView> {
    requireApprover(operator, `reject ${id}`);
    const approver = operatorActor(operator, via);
    const now = this.#clock();
    await this.#pending(id, now);
    await this.#db.transaction().execute(async (trx) => {
      const done = await trx
        .updateTable('approvals')
        .set({ status: 'rejected', decided_at: now.toISOString(), decided_by: approver.id, reason })
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      if (Number(done.numUpdatedRows) !== 1) throw stateError(id, 'pending');
      await appendEvent(trx, approver, now, {
        action: 'approval.rejected',
        subject: `approval:${id}`,
        details: { reason },
      });
    });
    this.#decided(id);
    return this.get(id);
  }

  #decided(id: string): void {
    try {
      this.#onDecided?.(id);
    } catch {
      // A wake-up never fails the decision it is about.
    }
  }

  /** How many approval requests are in each status (the metrics' approval gauge). */
  statusCounts(): Promise<Record<string, number>> {
    return statusCounts(this.#db);
  }

  /** Requests still decidable (pending, not expired): the console's count on every page. */
  countPending(): Promise<number> {
    return countPending(this.#db, this.#clock());
  }

  /**
   * The approval when it belongs to `owner` (asked in any run of that principal), else null: the
   * same answer for one that does not exist as for another principal's.
   */
  async getOwned(id: string, owner: ApprovalOwner): Promise<ApprovalView | null> {
    const row = await ownedApproval(this.#db, id);
    return row && isOwnedBy(row, owner) ? toView(row, this.#clock()) : null;
  }

  /** Of these approvals, the ids no longer pending (decided, withdrawn, expired) or gone. */
  settled(ids: readonly string[]): Promise<ReadonlySet<string>> {
    return settledApprovals(this.#db, ids, this.#clock());
  }

  async get(id: string): Promise<ApprovalView> {
    const row = await this.#db
      .selectFrom('approvals')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw new ToolgateError('NOT_FOUND', `no approval ${id}`, {});
    const now = this.#clock();
    const view = toView(row, now);
    const scope: ApprovalScopeView | null = await scopeOf(this.#db, id, view.rendered, now);
    return { ...view, scope };
  }

  list(status?: string): Promise<ApprovalView[]> {
    return listApprovals(this.#db, status, this.#clock());
  }

  /** One page of approvals, newest first (approval-reads.ts). */
  page(status: string | undefined, request: PageRequest = {}): Promise<Page<ApprovalView>> {
    return pageApprovals(this.#db, status, request, this.#clock());
  }

  #signer(): ApprovalSigner {
    this.#signerLoaded ??=
      typeof this.#signerSource === 'function' ? this.#signerSource() : this.#signerSource;
    return this.#signerLoaded;
  }

  #pending(id: string, now: Date): Promise<ApprovalRow> {
    return pendingRequest(this.#db, id, now);
  }
}
