/**
 * @module Four-eyes administrative changes (C4): a grant that unlocks a privileged tool
 * waits for one approver, and registering or granting an irreversible (or permission-changing)
 * tool waits for two distinct approvers. An approver is an authenticated operator account with
 * the approver role, never the change's requester, proving themselves with a fresh TOTP of their
 * own; two approvals from one account count once, so one person cannot stand in for two
 * (docs/architecture.md §6).
 */
import type { Kysely, Transaction } from 'kysely';
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
  appendEvent,
  type ChangeRequestRow,
  type Database,
  isUniqueViolation,
  olderThan,
} from '../../records/store/index.js';
import { approversNeeded, type CatalogService, type ToolDefinition } from '../catalog/index.js';
import type { AgentService } from '../identity/index.js';
import {
  BOOTSTRAP_ACTOR_ID,
  isGenesisAdmin,
  type Operator,
  operatorActor,
} from '../operators/index.js';
import {
  pendingGrantChangesIn,
  type RequestedChange,
  requestChangeIn,
  withdrawGrantChangesIn,
} from './change-requests.js';
import { requireApprover } from './decider.js';
import { changeSubject } from './decision-subjects.js';
import type { OperatorSecondFactors } from './operator-second-factors.js';
import {
  assertionDetails,
  type DecisionPasskeys,
  passkeyRequiredError,
  passkeysRequired,
} from './passkey-decisions.js';
import type { VerifiedDecision } from './passkeys.js';

export interface ChangeView {
  readonly id: string;
  readonly kind: 'grant' | 'tool';
  readonly subject: string;
  /** What the change is about: the tool version it activates, or the agent and capability. */
  readonly tool_id: string | null;
  readonly tool_version: string | null;
  readonly agent_id: string | null;
  readonly capability: string | null;
  readonly required: number;
  readonly approvers: readonly string[];
  readonly status: 'pending' | 'applied' | 'rejected' | 'withdrawn';
  readonly reason: string;
  readonly requested_by: string;
  readonly created_at: string;
  readonly decided_at: string | null;
}

/**
 * Locks the change's row for the rest of the transaction while it is pending (a no-op update:
 * a row lock on PostgreSQL, the write lock on SQLite). A decision that waited for another one
 * reads what that one committed.
 */
async function lockPending(trx: Transaction<Database>, id: string): Promise<void> {
  await trx
    .updateTable('change_requests')
    .set((eb) => ({ status: eb.ref('status') }))
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute();
}

/**
 * FORBIDDEN by a four-eyes rule of the change desk, and why: the requester's own change (or the
 * genesis admin's, requested through the bootstrap token), an account approving twice, an
 * unconfirmed account in a change that needs two people. Audited as `change.approval_refused`.
 */
class ApprovalRefused extends ToolgateError<'FORBIDDEN'> {
  readonly reason: 'own_request' | 'already_approved' | 'unconfirmed';
  constructor(message: string, reason: ApprovalRefused['reason']) {
    super('FORBIDDEN', message, {});
    this.reason = reason;
  }
}

function changeState(id: string, status: string): ToolgateError<'APPROVAL_STATE'> {
  return new ToolgateError('APPROVAL_STATE', `change ${id} is ${status}`, { approvalId: id });
}

export class ChangeDesk {
  readonly #db: Kysely<Database>;
  readonly #catalog: CatalogService;
  readonly #agents: AgentService;
  readonly #clock: Clock;
  /** Operators' enrolled second factors, read from the store on every check; null: none. */
  readonly #secondFactors: Pick<OperatorSecondFactors, 'check'> | null;
  readonly #passkeys: DecisionPasskeys | null;
  /** Every change grants or activates a gated tool: with this set, only a passkey approves one. */
  readonly #passkeyRequired: boolean;

  constructor(
    db: Kysely<Database>,
    catalog: CatalogService,
    agents: AgentService,
    options: {
      clock?: Clock;
      /** Without it no change can be approved: every approval needs the approver's TOTP. */
      secondFactors?: Pick<OperatorSecondFactors, 'check'>;
      /** Operators' passkeys: an approval signed with one (docs/architecture.md §6). */
      passkeys?: DecisionPasskeys;
      /** Changes need a passkey, not a TOTP code. */
      passkeyRequired?: boolean;
    } = {},
  ) {
    this.#db = db;
    this.#catalog = catalog;
    this.#agents = agents;
    this.#clock = options.clock ?? systemClock;
    this.#secondFactors = options.secondFactors ?? null;
    this.#passkeys = options.passkeys ?? null;
    this.#passkeyRequired = options.passkeyRequired ?? false;
  }

  /** Options of `navigator.credentials.get` for approving exactly this pending change. */
  async passkeyOptions(id: string, operator: Operator, requestOrigin: string | undefined) {
    requireApprover(operator, `approve change ${id}`);
    if (!this.#passkeys)
      throw new ToolgateError('FORBIDDEN', 'this gateway checks no passkeys', {});
    const row = await this.#pending(this.#db, id);
    const subject = await changeSubject(this.#db, row, operatorActor(operator, 'console').id);
    return this.#passkeys.decisionOptions(operator, subject, requestOrigin);
  }

  /**
   * The approver's step-up: a passkey's assertion over exactly this change (checked against the
   * stored request), or a fresh TOTP code where the organisation does not require a passkey.
   */
  async #stepUp(
    id: string,
    operator: Operator,
    approver: Actor,
    proof: { totp: unknown; passkey?: unknown },
  ): Promise<{ step: number | null; passkey: VerifiedDecision | null }> {
    if (proof.passkey !== undefined) {
      if (!this.#passkeys)
        throw new ToolgateError('FORBIDDEN', 'this gateway checks no passkeys', {});
      const row = await this.#pending(this.#db, id);
      const subject = await changeSubject(this.#db, row, approver.id);
      const passkey = await this.#passkeys.verifyDecision(
        operator,
        subject,
        proof.passkey,
        approver.via,
      );
      return { step: null, passkey };
    }
    if (await passkeysRequired(this.#db, this.#passkeyRequired))
      throw await passkeyRequiredError(this.#db, approver, this.#clock(), 'change', id);
    if (!this.#secondFactors) {
      throw new ToolgateError(
        'FORBIDDEN',
        `change ${id} needs the approver's second factor and this gateway checks none`,
        {},
      );
    }
    // Checked before the transaction: a failed code must stay counted when nothing is approved.
    // A reuse racing past this check fails on the unique (approver, step) index instead.
    const step = await this.#secondFactors.check(operator.id, proof.totp, 'change.totp');
    return { step, passkey: null };
  }

  /** Capabilities that unlock gated tools, with the approvers each needs (the largest need wins). */
  async gatedCapabilities(
    trx: Transaction<Database>,
  ): Promise<Map<string, { required: number; tools: string[] }>> {
    const rows = await trx
      .selectFrom('tool_versions')
      .select(['tool_id', 'definition'])
      .where('lifecycle', '!=', 'retired')
      .where((eb) =>
        eb.or([
          eb('access_tier', '=', 'privileged'),
          eb('action_class', 'in', ['irreversible', 'permission_change']),
        ]),
      )
      .execute();
    const gated = new Map<string, { required: number; tools: string[] }>();
    for (const row of rows) {
      const def = JSON.parse(row.definition) as ToolDefinition;
      const need = approversNeeded(def);
      for (const cap of def.required_capabilities) {
        const entry = gated.get(cap) ?? { required: 0, tools: [] };
        entry.required = Math.max(entry.required, need);
        if (!entry.tools.includes(row.tool_id)) entry.tools.push(row.tool_id);
        gated.set(cap, entry);
      }
    }
    return gated;
  }

  /** Opens a request inside the caller's transaction, unless the same one is already pending. */
  async requestIn(
    trx: Transaction<Database>,
    change: RequestedChange,
    required: number,
    reason: string,
    actor: Actor,
  ): Promise<{ id: string; created: boolean }> {
    return requestChangeIn(trx, this.#clock, change, required, reason, actor);
  }

  /** Pending requests to grant `capability` to `agentId`, inside the caller's transaction. */
  async pendingGrantIn(
    trx: Transaction<Database>,
    agentId: string,
    capability: string,
  ): Promise<string[]> {
    return pendingGrantChangesIn(trx, agentId, capability);
  }

  /** Withdraws them (audited, `change.withdrawn`), inside the caller's transaction. */
  async withdrawGrantIn(
    trx: Transaction<Database>,
    agentId: string,
    capability: string,
    actor: Actor,
    reason: string,
  ): Promise<string[]> {
    return withdrawGrantChangesIn(trx, this.#clock, agentId, capability, actor, reason);
  }

  /**
   * One approver's approval: `operator` is who the request authenticated as, holding the approver
   * role, not the requester, not an approver of this change already, with a fresh TOTP of their
   * own or their passkey's assertion over exactly this change (`passkey`, stored with the
   * approval and named in its audit record). When the required number of distinct approvers is
   * reached, the change takes effect in the same transaction.
   */
  async approve(
    id: string,
    operator: Operator,
    totp: unknown,
    via: Actor['via'] = 'library',
    proof: { readonly passkey?: unknown } = {},
  ): Promise<ChangeView> {
    requireApprover(operator, `approve change ${id}`);
    const approver = operatorActor(operator, via);
    const approverId = approver.id;
    // Who may not approve is settled before a code is spent on it, and again in the transaction.
    await this.#mayApproveAudited(id, approver);
    const now = this.#clock();
    const check = await this.#stepUp(id, operator, approver, { totp, ...proof });
    const approveInTransaction = this.#db.transaction().execute(async (trx): Promise<boolean> => {
      // Deciding is serialised per change: the row is locked before the approvals are counted,
      // so of two approvers deciding at once the second counts the first's approval (on
      // PostgreSQL's read committed as on SQLite) and exactly one of them applies the change.
      await lockPending(trx, id);
      const { row, already } = await this.#mayApprove(trx, id, approverId);
      await trx
        .insertInto('change_approvals')
        .values({
          change_id: id,
          approver_id: approverId,
          totp_step: check.step,
          at: now.toISOString(),
        })
        .execute();
      if (check.passkey) await this.#passkeys?.recordIn(trx, check.passkey);
      // Authority is read when it is used: an earlier approval counts only while its approver
      // still qualifies now, when the change is decided (enabled, holding `approver`, confirmed).
      const notCounted = await this.#noLongerQualified(trx, row, already);
      const counted = already.length - notCounted.length + 1;
      await appendEvent(trx, approver, now, {
        action: 'change.approved',
        subject: `change:${id}`,
        details: {
          approvals: counted,
          required: row.required,
          ...(notCounted.length > 0 ? { not_counted: notCounted } : {}),
          ...assertionDetails(check.passkey),
        },
      });
      if (counted < row.required) return false;
      const applied = await trx
        .updateTable('change_requests')
        .set({ status: 'applied', decided_at: now.toISOString() })
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      if (Number(applied.numUpdatedRows) !== 1) throw changeState(id, 'decided');
      if (row.kind === 'grant' && row.agent_id && row.capability) {
        await this.#agents.grantIn(
          trx,
          { agent: row.agent_id, capabilities: [row.capability] },
          approver,
        );
      }
      return true;
    });
    let appliedHere: boolean;
    try {
      appliedHere = await approveInTransaction;
    } catch (err) {
      // Two approvals racing with one code: the unique (approver, step) index lets one through.
      if (isUniqueViolation(err)) {
        throw new ToolgateError('INPUT_INVALID', 'second factor replayed', {
          problems: [problem('/totp', 'second factor replayed', 'change.totp')],
        });
      }
      throw err;
    }
    const applied = await this.get(id);
    // Only the approval that applied the change activates its tool: never twice.
    if (appliedHere) {
      const row = await this.#db
        .selectFrom('change_requests')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      if (row.kind === 'tool' && row.tool_id && row.tool_version) {
        await this.#catalog.activate(row.tool_id, row.tool_version, approver, {
          approvedChange: id,
        });
      }
    }
    return applied;
  }

  /** `#mayApprove` outside a transaction; its four-eyes refusals are audited. */
  async #mayApproveAudited(id: string, approver: Actor): Promise<void> {
    try {
      await this.#mayApprove(this.#db, id, approver.id);
    } catch (err) {
      // A refusal of four eyes is audited (invariant 14), on every front alike.
      if (err instanceof ApprovalRefused) {
        await appendEvent(this.#db, approver, this.#clock(), {
          action: 'change.approval_refused',
          subject: `change:${id}`,
          details: { reason: err.reason, message: err.message },
        });
      }
      throw err;
    }
  }

  /** By an approver, as for `approve`; a rejection needs no second factor. */
  async reject(
    id: string,
    operator: Operator,
    reason: string,
    via: Actor['via'] = 'library',
  ): Promise<ChangeView> {
    requireApprover(operator, `reject change ${id}`);
    const actor = operatorActor(operator, via);
    const now = this.#clock();
    await this.#db.transaction().execute(async (trx) => {
      await lockPending(trx, id);
      await this.#pending(trx, id);
      // Only a pending change is rejected: a rejection racing the approval that applies it
      // never turns an applied change (its grant already made) into a rejected one.
      const done = await trx
        .updateTable('change_requests')
        .set({ status: 'rejected', decided_at: now.toISOString() })
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      if (Number(done.numUpdatedRows) !== 1) throw changeState(id, 'decided');
      await appendEvent(trx, actor, now, {
        action: 'change.rejected',
        subject: `change:${id}`,
        details: { reason },
      });
    });
    return this.get(id);
  }

  async get(id: string): Promise<ChangeView> {
    const row = await this.#db
      .selectFrom('change_requests')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw new ToolgateError('NOT_FOUND', `no change ${id}`, {});
    return this.#view(row);
  }

  async list(status?: string): Promise<ChangeView[]> {
    let q = this.#db
      .selectFrom('change_requests')
      .selectAll()
      .orderBy('created_at', 'desc')
      .limit(500);
    if (status) q = q.where('status', '=', status);
    return Promise.all((await q.execute()).map((r) => this.#view(r)));
  }

  /** One page of change requests, newest first, walked by (created_at, id). */
  /** Changes waiting for approvers: the console's count on every page. */
  async countPending(): Promise<number> {
    const row = await this.#db
      .selectFrom('change_requests')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async page(status: string | undefined, request: PageRequest = {}): Promise<Page<ChangeView>> {
    const limit = pageLimit(request.limit);
    let q = this.#db
      .selectFrom('change_requests')
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1);
    if (status) q = q.where('status', '=', status);
    if (request.cursor !== undefined) {
      const [at, id] = decodeCursor('changes', request.cursor);
      q = q.where(olderThan(String(at), String(id)));
    }
    const rows = await Promise.all((await q.execute()).map((r) => this.#view(r)));
    return pageFromRows('changes', rows, (c) => [c.created_at, c.id], limit);
  }

  /**
   * The pending change and its approvals so far, or a refusal: the requester cannot approve their
   * own change (a change the bootstrap token requested is the genesis admin's own), and one
   * account approves a change once (four eyes are two accounts).
   */
  async #mayApprove(
    db: Kysely<Database> | Transaction<Database>,
    id: string,
    approverId: string,
  ): Promise<{ row: ChangeRequestRow; already: { approver_id: string }[] }> {
    const row = await this.#pending(db, id);
    if (row.requested_by === approverId) {
      throw new ApprovalRefused(
        `${approverId} requested change ${id} and cannot approve it; another approver must`,
        'own_request',
      );
    }
    // The bootstrap token is the genesis admin's secret (one secret, one person): a change it
    // requested is that admin's own (docs/security-model.md, "Four eyes: two people").
    if (
      row.requested_by === BOOTSTRAP_ACTOR_ID &&
      approverId.startsWith('operator:') &&
      (await isGenesisAdmin(db, approverId.slice('operator:'.length)))
    ) {
      throw new ApprovalRefused(
        `change ${id} was requested through the bootstrap admin token, the secret of the genesis admin ${approverId} (one secret, one person), who cannot approve it; another approver must`,
        'own_request',
      );
    }
    const already = await db
      .selectFrom('change_approvals')
      .select('approver_id')
      .where('change_id', '=', id)
      .execute();
    if (already.some((a) => a.approver_id === approverId)) {
      throw new ApprovalRefused(
        `${approverId} already approved this change; a second, different approver is needed`,
        'already_approved',
      );
    }
    // Four eyes are two people: in a change that needs two approvers, an account counts only
    // while it is confirmed (docs/security-model.md, "Four eyes: two people, not two accounts").
    if (row.required >= 2) await this.#requireConfirmed(db, id, approverId);
    return { row, already };
  }

  /**
   * The earlier approvers of a change that needs two people whose approval no longer counts: the
   * account is gone or disabled, no longer holds `approver`, or is no longer confirmed. Their
   * approvals stay recorded (and count again if the account qualifies again at a later decision).
   */
  async #noLongerQualified(
    db: Kysely<Database> | Transaction<Database>,
    row: ChangeRequestRow,
    already: readonly { approver_id: string }[],
  ): Promise<string[]> {
    if (row.required < 2 || already.length === 0) return [];
    const ids = already.map((a) =>
      a.approver_id.startsWith('operator:') ? a.approver_id.slice('operator:'.length) : '',
    );
    const named = ids.filter((i) => i !== '');
    const accounts =
      named.length === 0
        ? []
        : await db
            .selectFrom('operators')
            .select(['id', 'roles', 'disabled', 'confirmed_by'])
            .where('id', 'in', named)
            .execute();
    const qualified = (operatorId: string): boolean => {
      const account = accounts.find((a) => a.id === operatorId);
      if (!account || account.disabled === 1 || account.confirmed_by === null) return false;
      const roles: unknown = JSON.parse(account.roles);
      return Array.isArray(roles) && roles.includes('approver');
    };
    return already.filter((_, i) => !qualified(ids[i] ?? '')).map((a) => a.approver_id);
  }

  async #requireConfirmed(
    db: Kysely<Database> | Transaction<Database>,
    id: string,
    approverId: string,
  ): Promise<void> {
    const operatorId = approverId.startsWith('operator:')
      ? approverId.slice('operator:'.length)
      : '';
    const account = await db
      .selectFrom('operators')
      .select('confirmed_by')
      .where('id', '=', operatorId)
      .executeTakeFirst();
    if (account && account.confirmed_by !== null) return;
    throw new ApprovalRefused(
      `operator ${operatorId || approverId} is not confirmed and does not count toward change ${id}, which needs two people: another confirmed approver or admin confirms it first (toolgate operators confirm ${operatorId || approverId})`,
      'unconfirmed',
    );
  }

  async #pending(
    trx: Kysely<Database> | Transaction<Database>,
    id: string,
  ): Promise<ChangeRequestRow> {
    const row = await trx
      .selectFrom('change_requests')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw new ToolgateError('NOT_FOUND', `no change ${id}`, {});
    if (row.status !== 'pending')
      throw new ToolgateError('APPROVAL_STATE', `change ${id} is ${row.status}`, {
        approvalId: id,
      });
    return row;
  }

  async #view(row: ChangeRequestRow): Promise<ChangeView> {
    const approvers = await this.#db
      .selectFrom('change_approvals')
      .select('approver_id')
      .where('change_id', '=', row.id)
      .orderBy('at')
      .execute();
    return {
      id: row.id,
      kind: row.kind as ChangeView['kind'],
      subject:
        row.kind === 'grant'
          ? `grant ${row.capability} to ${row.agent_id}`
          : `activate ${row.tool_id}@${row.tool_version}`,
      tool_id: row.tool_id,
      tool_version: row.tool_version,
      agent_id: row.agent_id,
      capability: row.capability,
      required: row.required,
      approvers: approvers.map((a) => a.approver_id),
      status: row.status as ChangeView['status'],
      reason: row.reason,
      requested_by: row.requested_by,
      created_at: row.created_at,
      decided_at: row.decided_at,
    };
  }
}
