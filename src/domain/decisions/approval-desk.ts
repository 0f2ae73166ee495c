/**
 * @module Approval requests and their consumption (C8). A call that needs approval is
 * stored with its resolved form; an approver's decision issues a signed token bound to tool,
 * agent, session and the canonical hash of the arguments; a retry of exactly that call consumes
 * the token once. Approving happens only on admin paths, never through anything an agent sends;
 * the approver is the authenticated operator deciding (docs/architecture.md §6), with a fresh TOTP
 * of their own where the call needs a step-up.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { RenderedCall } from '../../core/index.js';
import {
  type Actor,
  type Clock,
  decodeCursor,
  type Page,
  type PageRequest,
  pageFromRows,
  pageLimit,
  problem,
  systemClock,
  ToolgateError,
} from '../../core/index.js';
import {
  type ApprovalRow,
  appendEvent,
  type Database,
  isUniqueViolation,
  olderThan,
} from '../../records/store/index.js';
import { type Operator, operatorActor } from '../operators/index.js';
import {
  DEFAULT_AGENT_CAPS,
  lockAgent,
  maxPendingApprovalsPerPrincipal,
  pendingApprovalsOf,
  pendingApprovalsOfPrincipal,
  withdrawRunApprovals,
} from '../sessions/index.js';
import type { ApprovalBinding, ApprovalSigner } from './approval-token.js';
import { requireApprover } from './decider.js';
import type { OperatorSecondFactors } from './operator-second-factors.js';

export interface ApprovalView {
  readonly id: string;
  readonly status: 'pending' | 'approved' | 'rejected' | 'consumed' | 'expired' | 'withdrawn';
  readonly session_id: string;
  readonly agent_id: string;
  readonly user_id: string | null;
  readonly tool_id: string;
  readonly tool_version: string;
  readonly action_class: string;
  readonly rendered: RenderedCall;
  readonly second_factor: boolean;
  readonly out_of_band: boolean;
  readonly created_at: string;
  readonly expires_at: string;
  readonly decided_at: string | null;
  readonly decided_by: string | null;
  readonly reason: string | null;
}

export interface ApprovalCall {
  readonly sessionId: string;
  readonly agentId: string;
  readonly userId: string | null;
  /**
   * The principal whose share of the agent's pending approvals this call spends: the token user's
   * id when a token vouched for the session's user, null for the agent's own keys together.
   */
  readonly tokenUser: string | null;
  readonly toolId: string;
  readonly toolVersion: string;
  readonly actionClass: string;
  readonly argsHash: string;
  readonly rendered: RenderedCall;
}

const REQUEST_TTL_MS = 24 * 3600 * 1000;
const TOKEN_TTL_S = 600;
export const MAX_PENDING_PER_SESSION = 20;

export class ApprovalDesk {
  readonly #db: Kysely<Database>;
  readonly #signerSource: ApprovalSigner | (() => ApprovalSigner);
  #signerLoaded: ApprovalSigner | null = null;
  readonly #clock: Clock;
  /** Operators' enrolled second factors, read from the store on every check; null: none. */
  readonly #secondFactors: Pick<OperatorSecondFactors, 'check'> | null;
  readonly #maxPendingPerAgent: number;
  readonly #maxPendingPerPrincipal: number;
  readonly #onPending: ((view: ApprovalView) => void) | undefined;

  constructor(
    db: Kysely<Database>,
    /** The signer, or how to load it: loaded on first use, so read-only commands create no key. */
    signer: ApprovalSigner | (() => ApprovalSigner),
    options: {
      clock?: Clock;
      /** Without it no step-up can succeed, so calls that need one cannot be approved. */
      secondFactors?: Pick<OperatorSecondFactors, 'check'>;
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
    } = {},
  ) {
    this.#onPending = options.onPending;
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
  }

  /**
   * Consumes an approved approval of exactly this call if there is one (its token verified and
   * marked used in one atomic step), else returns the pending request, creating it if needed.
   */
  async resolve(
    call: ApprovalCall,
  ): Promise<
    | { kind: 'approved'; approvalId: string; approver: string }
    | { kind: 'pending'; approvalId: string }
    | { kind: 'too_many'; scope: 'session' | 'agent' | 'principal' }
  > {
    const now = this.#clock();
    const candidates = await this.#db
      .selectFrom('approvals')
      .selectAll()
      .where('session_id', '=', call.sessionId)
      .where('tool_id', '=', call.toolId)
      .where('args_hash', '=', call.argsHash)
      .where('status', 'in', ['approved', 'pending'])
      .execute();
    for (const row of candidates.filter((r) => r.status === 'approved')) {
      const verdict = this.#signer().verify(row.token, bindingOf(row), now);
      // The stored token must match this very call: tool version, agent and arguments included.
      if (!verdict.ok || row.agent_id !== call.agentId || row.tool_version !== call.toolVersion)
        continue;
      const used = await this.#db
        .updateTable('approvals')
        .set({ status: 'consumed', consumed_at: now.toISOString() })
        .where('id', '=', row.id)
        .where('status', '=', 'approved')
        .executeTakeFirst();
      if (Number(used.numUpdatedRows) === 1)
        return { kind: 'approved', approvalId: row.id, approver: row.decided_by ?? '' };
    }
    // Finding, counting and creating pending requests happen under a lock on the session row, so
    // parallel calls neither duplicate a request nor slip past the cap.
    let created: ApprovalRow | null = null;
    const outcome = await this.#db.transaction().execute(async (trx) => {
      await trx
        .updateTable('sessions')
        .set((eb) => ({ status: eb.ref('status') }))
        .where('id', '=', call.sessionId)
        .execute();
      const pending = await trx
        .selectFrom('approvals')
        .select(['id', 'expires_at'])
        .where('session_id', '=', call.sessionId)
        .where('tool_id', '=', call.toolId)
        .where('tool_version', '=', call.toolVersion)
        .where('agent_id', '=', call.agentId)
        .where('args_hash', '=', call.argsHash)
        .where('status', '=', 'pending')
        .execute();
      const live = pending.find((r) => Date.parse(r.expires_at) > now.getTime());
      if (live) return { kind: 'pending' as const, approvalId: live.id };
      const full = await this.#fullScope(trx, call, now);
      if (full !== null) return { kind: 'too_many' as const, scope: full };
      const id = `apr_${randomBytes(12).toString('base64url')}`;
      const row: ApprovalRow = {
        id,
        session_id: call.sessionId,
        agent_id: call.agentId,
        user_id: call.userId,
        tool_id: call.toolId,
        tool_version: call.toolVersion,
        action_class: call.actionClass,
        args_hash: call.argsHash,
        rendered: JSON.stringify(call.rendered),
        status: 'pending',
        second_factor: call.rendered.second_factor ? 1 : 0,
        out_of_band: call.rendered.out_of_band ? 1 : 0,
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + REQUEST_TTL_MS).toISOString(),
        decided_at: null,
        decided_by: null,
        reason: null,
        token: null,
        token_id: null,
        consumed_at: null,
        totp_step: null,
      };
      await trx.insertInto('approvals').values(row).execute();
      created = row;
      return { kind: 'pending' as const, approvalId: id };
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
   * The approval a retried call names (its sealed `requestState`): consumes it if approved, else
   * says why not. Never opens a request and never consumes another one: the call runs only on the
   * approval it was sealed with, once. One primary-key read (and the consuming update).
   */
  async resolveBound(
    approvalId: string,
    call: ApprovalCall,
  ): Promise<
    | { kind: 'approved'; approvalId: string; approver: string }
    | { kind: 'pending'; approvalId: string }
    | { kind: 'rejected'; reason: string | null }
    | { kind: 'refused'; why: 'mismatch' | 'used' | 'expired' }
  > {
    const now = this.#clock();
    const row = await this.#db
      .selectFrom('approvals')
      .selectAll()
      .where('id', '=', approvalId)
      .executeTakeFirst();
    // The state was sealed for this approval and this call: anything else is another call's.
    if (
      !row ||
      row.session_id !== call.sessionId ||
      row.agent_id !== call.agentId ||
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
      case 'withdrawn':
        return { kind: 'refused', why: 'used' };
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
   * Admin path only: `operator` is who the request authenticated as, never a name it stated. They
   * must hold the approver role; a call that needs a step-up (see `needsStepUp`) needs a fresh
   * TOTP of theirs. The decision is recorded as `operatorActor(operator)`.
   */
  async approve(
    id: string,
    operator: Operator,
    options: { totp?: string; reason?: string; via?: Actor['via'] } = {},
  ): Promise<ApprovalView> {
    requireApprover(operator, `approve ${id}`);
    const approver = operatorActor(operator, options.via ?? 'library');
    const now = this.#clock();
    const row = await this.#pending(id, now);
    let totpStep: number | null = null;
    if (needsStepUp(row)) {
      if (!this.#secondFactors) {
        throw new ToolgateError(
          'FORBIDDEN',
          `approval ${id} needs a second factor and this gateway checks none`,
          {},
        );
      }
      // Checked before the transaction: a failed code stays counted though nothing is approved.
      totpStep = await this.#secondFactors.check(operator.id, options.totp, 'approval.totp');
    }
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
      await appendEvent(trx, approver, now, {
        action: 'approval.approved',
        subject: `approval:${id}`,
        details: { second_factor: row.second_factor === 1, step_up: totpStep !== null },
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
    return this.get(id);
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
    return this.get(id);
  }

  /** How many approval requests are in each status (the metrics' approval gauge). */
  async statusCounts(): Promise<Record<string, number>> {
    const rows = await this.#db
      .selectFrom('approvals')
      .select('status')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .groupBy('status')
      .execute();
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  }

  /** Requests still decidable (pending, not expired): the console's count on every page. */
  async countPending(): Promise<number> {
    const row = await this.#db
      .selectFrom('approvals')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'pending')
      .where('expires_at', '>', this.#clock().toISOString())
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async get(id: string): Promise<ApprovalView> {
    const row = await this.#db
      .selectFrom('approvals')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw new ToolgateError('NOT_FOUND', `no approval ${id}`, {});
    return toView(row, this.#clock());
  }

  async list(status?: string): Promise<ApprovalView[]> {
    let q = this.#db.selectFrom('approvals').selectAll().orderBy('created_at', 'desc').limit(500);
    if (status) q = q.where('status', '=', status);
    const now = this.#clock();
    return (await q.execute()).map((r) => toView(r, now));
  }

  /**
   * One page of approvals, newest first, walked by (created_at, id): requests arriving while an
   * admin pages are above the walk and never push older ones out of it. `pending`
   * means still decidable; `expired` means pending past its time.
   */
  async page(status: string | undefined, request: PageRequest = {}): Promise<Page<ApprovalView>> {
    const limit = pageLimit(request.limit);
    const now = this.#clock();
    let q = this.#db
      .selectFrom('approvals')
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1);
    if (status === 'pending' || status === 'expired') {
      q = q
        .where('status', '=', 'pending')
        .where('expires_at', status === 'pending' ? '>' : '<=', now.toISOString());
    } else if (status) q = q.where('status', '=', status);
    if (request.cursor !== undefined) {
      const [at, id] = decodeCursor('approvals', request.cursor);
      q = q.where(olderThan(String(at), String(id)));
    }
    const rows = (await q.execute()).map((r) => toView(r, now));
    return pageFromRows('approvals', rows, (a) => [a.created_at, a.id], limit);
  }

  #signer(): ApprovalSigner {
    this.#signerLoaded ??=
      typeof this.#signerSource === 'function' ? this.#signerSource() : this.#signerSource;
    return this.#signerLoaded;
  }

  async #pending(id: string, now: Date): Promise<ApprovalRow> {
    const row = await this.#db
      .selectFrom('approvals')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw new ToolgateError('NOT_FOUND', `no approval ${id}`, {});
    const status = toView(row, now).status;
    if (status === 'withdrawn') throw withdrawnError(id, row.reason);
    if (status !== 'pending') throw stateError(id, 'pending');
    // A run that ended without anyone noticing yet: its approval is withdrawn now, not decided.
    const run = await this.#db
      .selectFrom('sessions')
      .select(['status', 'expires_at'])
      .where('id', '=', row.session_id)
      .executeTakeFirst();
    const ended = run?.status !== 'open' || Date.parse(run.expires_at) <= now.getTime();
    if (ended) {
      const reason = run?.status === 'open' ? 'run expired' : 'run ended';
      await withdrawRunApprovals(this.#db, row.session_id, reason, now);
      throw withdrawnError(id, reason);
    }
    return row;
  }
}

/**
 * Which approvals need the approver's fresh TOTP: every call of an irreversible or
 * permission-changing tool, and any call whose tool declares a second factor.
 */
export function needsStepUp(row: Pick<ApprovalRow, 'second_factor' | 'action_class'>): boolean {
  return (
    row.second_factor === 1 ||
    row.action_class === 'irreversible' ||
    row.action_class === 'permission_change'
  );
}

function bindingOf(row: ApprovalRow): ApprovalBinding {
  return {
    approvalId: row.id,
    toolId: row.tool_id,
    toolVersion: row.tool_version,
    agentId: row.agent_id,
    sessionId: row.session_id,
    argsHash: row.args_hash,
  };
}

function withdrawnError(id: string, reason: string | null): ToolgateError {
  return new ToolgateError(
    'APPROVAL_STATE',
    `approval ${id} was withdrawn (${reason ?? 'its run ended'}): no retry can use it, so it cannot be decided`,
    { approvalId: id },
  );
}

function stateError(id: string, expected: string): ToolgateError {
  return new ToolgateError('APPROVAL_STATE', `approval ${id} is not ${expected}`, {
    approvalId: id,
  });
}

function toView(row: ApprovalRow, now: Date): ApprovalView {
  const expired = row.status === 'pending' && Date.parse(row.expires_at) <= now.getTime();
  return {
    id: row.id,
    status: (expired ? 'expired' : row.status) as ApprovalView['status'],
    session_id: row.session_id,
    agent_id: row.agent_id,
    user_id: row.user_id,
    tool_id: row.tool_id,
    tool_version: row.tool_version,
    action_class: row.action_class,
    rendered: JSON.parse(row.rendered) as RenderedCall,
    second_factor: row.second_factor === 1,
    out_of_band: row.out_of_band === 1,
    created_at: row.created_at,
    expires_at: row.expires_at,
    decided_at: row.decided_at,
    decided_by: row.decided_by,
    reason: row.reason,
  };
}
