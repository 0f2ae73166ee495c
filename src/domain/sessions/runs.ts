/**
 * @module Runs: the handle a stateless (2026-07-28) MCP client carries in `_meta` instead of an
 * MCP session. A run IS a gate session row — its id (`ses_` + 128 random bits from the CSPRNG)
 * is the handle — so the permitted set, the toxic-combination rule, the flow rule and per-run
 * budgets attach to it exactly as to a session, and a handle lookup on the gate's hot path is the
 * gate's own cached session lookup by primary key. The handle is a bearer secret only together
 * with the full principal it was minted for (agent, user, credential). Minting, revoking and
 * expiry are audited; nothing here resets what attaches to the principal over a window (rate
 * limits, ceilings, the flow window), which the gate keeps per agent and user.
 */
import {
  type Actor,
  type AgentPrincipal,
  type Clock,
  type Page,
  type PageRequest,
  systemActor,
  systemClock,
  ToolgateError,
} from '../../core/index.js';
import {
  appendEvent,
  bumpIdentityRevision,
  type SessionRow,
  type Store,
} from '../../records/store/index.js';
import { asPrincipal, principalMatches } from './session-principal.js';
import type { LiveSession, SessionService } from './session-service.js';
import { withdrawRunApprovals } from './withdraw-approvals.js';

/** What a minted run's holder needs: its handle and when it ends. */
export interface RunHandle {
  readonly handle: string;
  readonly expiresAt: string;
}

export class RunService {
  readonly #store: Store;
  readonly #sessions: SessionService;
  readonly #clock: Clock;

  constructor(store: Store, sessions: SessionService, clock: Clock = systemClock) {
    this.#store = store;
    this.#sessions = sessions;
    this.#clock = clock;
  }

  /** A new run for this principal (a gate session bound to it), audited as `run.minted`. */
  async mint(
    who: AgentPrincipal,
    options: { readonly ttlSeconds?: number; readonly via: string },
  ): Promise<RunHandle> {
    const session = await this.#sessions.open(who, {
      ...(options.ttlSeconds !== undefined ? { ttlSeconds: options.ttlSeconds } : {}),
    });
    await appendEvent(this.#store.db, systemActor('runs'), this.#clock(), {
      action: 'run.minted',
      subject: `session:${session.id}`,
      details: {
        agent: who.agentId,
        user: who.user?.id ?? null,
        credential: who.credential ?? null,
        expires_at: session.expires_at,
        via: options.via,
      },
    });
    return { handle: session.id, expiresAt: session.expires_at };
  }

  /**
   * Why a handle the gate refused (SESSION_NOT_FOUND) is not usable, as the error to send: the
   * caller's own expired or revoked run is said so (an expiry is audited once, the row marked
   * `expired`); anything else — unknown, or another principal's (audited by the session check) —
   * is RUN_NOT_FOUND, which tells nothing about anyone else's.
   */
  async refusal(handle: string, who: AgentPrincipal): Promise<ToolgateError> {
    const row = await this.#store.db
      .selectFrom('sessions')
      .selectAll()
      .where('id', '=', handle)
      .executeTakeFirst();
    const notFound = new ToolgateError('RUN_NOT_FOUND', 'no run with this handle', {});
    // A live one of someone else was audited (session.principal_mismatch) by the session check
    // that refused it; this only chooses the words.
    if (!row || !principalMatches(row, asPrincipal(who))) return notFound;
    if (row.status === 'revoked') {
      return new ToolgateError('RUN_REVOKED', 'this run was revoked; start a new one', {
        run: handle,
      });
    }
    const expired = Date.parse(row.expires_at) <= this.#clock().getTime();
    if (expired && (row.status === 'open' || row.status === 'expired')) {
      if (row.status === 'open') await this.#markExpired(handle, row.agent_id, row.expires_at);
      return new ToolgateError('RUN_EXPIRED', 'this run has expired; start a new one', {
        run: handle,
        expiredAt: row.expires_at,
      });
    }
    // Closed with its MCP session, evicted, or still open (a refusal for another reason).
    return notFound;
  }

  /** Ends the caller's own run at once, audited as `run.revoked`; its handle is refused after. */
  async revoke(
    handle: string,
    who: AgentPrincipal,
    reason = 'revoked by its holder',
  ): Promise<void> {
    const row = await this.#sessions.require(handle, who);
    await this.#revoke(row, systemActor('runs'), reason);
  }

  /**
   * An operator ends any open run at once, audited as `run.revoked` with the operator as actor;
   * the holder's next request is refused with RUN_REVOKED. An unknown handle, or a run no
   * longer open (closed, expired, revoked), is RUN_NOT_FOUND and changes nothing.
   */
  async revokeBy(handle: string, actor: Actor, reason: string): Promise<void> {
    const row = await this.#store.db
      .selectFrom('sessions')
      .selectAll()
      .where('id', '=', handle)
      .executeTakeFirst();
    if (row?.status !== 'open' || Date.parse(row.expires_at) <= this.#clock().getTime()) {
      throw new ToolgateError('RUN_NOT_FOUND', 'no open run with this handle', {});
    }
    await this.#revoke(row, actor, reason);
  }

  /**
   * Open, unexpired runs, newest first, optionally of one agent: what an operator may revoke.
   * The same view (and the same handles) as the live sessions list shows admins and auditors.
   */
  async open(filter: { readonly agentId?: string } & PageRequest = {}): Promise<Page<LiveSession>> {
    return this.#sessions.live(filter);
  }

  /**
   * The one revoke path, for the holder and for operators alike: anything a revoke must also do
   * (closing what hangs on the run) belongs here, so both kinds of revoke do it.
   */
  async #revoke(row: SessionRow, actor: Actor, reason: string): Promise<void> {
    const handle = row.id;
    const result = await this.#store.db
      .updateTable('sessions')
      .set({ status: 'revoked' })
      .where('id', '=', handle)
      .where('status', '=', 'open')
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) {
      throw new ToolgateError('RUN_NOT_FOUND', 'no run with this handle', {});
    }
    // Gates cache session rows: a revoked run must stop at once here and soon everywhere.
    await bumpIdentityRevision(this.#store.db);
    await appendEvent(this.#store.db, actor, this.#clock(), {
      action: 'run.revoked',
      subject: `session:${handle}`,
      details: { agent: row.agent_id, user: row.user_id, reason },
    });
    // Its approvals can no longer be completed by anyone: withdrawn, not left in the inbox.
    await withdrawRunApprovals(this.#store.db, handle, 'run revoked', this.#clock());
  }

  async #markExpired(handle: string, agentId: string, expiresAt: string): Promise<void> {
    const result = await this.#store.db
      .updateTable('sessions')
      .set({ status: 'expired' })
      .where('id', '=', handle)
      .where('status', '=', 'open')
      .executeTakeFirst();
    // Only the request that moved the row records it: one `run.expired` per run.
    if (Number(result.numUpdatedRows) !== 1) return;
    await appendEvent(this.#store.db, systemActor('runs'), this.#clock(), {
      action: 'run.expired',
      subject: `session:${handle}`,
      details: { agent: agentId, expired_at: expiresAt },
    });
    // Its approvals stay the principal's: completed from its next run (approval-owner.ts).
  }
}
