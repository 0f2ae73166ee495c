/**
 * @module The counters the gate's steps take and charge: rate slots, a session's external sends,
 * the agent's rolling ceilings and spend (ceilings.ts), and the cross-session private-read mark.
 * The steps reach the database only through this (and the session, idempotency and audit
 * services): each statement stays in limits.ts and ceilings.ts, atomic as it was.
 */

import type { Store } from '../../records/store/index.js';
import type { RateLimit } from '../catalog/index.js';
import type { AgentCeilings, SessionBudgets } from '../identity/index.js';
import {
  type Admission,
  admitCall,
  type CallFacts,
  chargeEgress,
  readPrivateRecently,
  recordPrivateRead,
  sweepCeilingCounters,
} from './ceilings.js';
import { type LimitCheck, sweepRateCounters, takeExternalSend, takeRateLimits } from './limits.js';

/**
 * Which counters a call charges, and when: the session's agent and user (its token user or its
 * `on_behalf_of` user). Not who is calling — that is the call's AgentPrincipal (core/principal.ts).
 */
export interface CeilingCall {
  readonly agentId: string;
  readonly userId: string | null;
  readonly now: Date;
}

/** Thrown to end a dry run's transaction: it rolls back whatever it charged. */
const ROLLBACK = Symbol('dry run');

export class CallCounters {
  readonly #store: Pick<Store, 'db' | 'chargeCounters'>;

  constructor(store: Pick<Store, 'db' | 'chargeCounters'>) {
    this.#store = store;
  }

  takeRateLimits(
    call: {
      agentId: string;
      userId: string | null;
      toolId: string;
      runId: string;
      now: Date;
      sessionExpiresAt: string;
    },
    limit: RateLimit | undefined,
  ): Promise<LimitCheck> {
    return takeRateLimits(this.#store.db, call, limit);
  }

  takeExternalSend(sessionId: string, budgets: SessionBudgets): Promise<LimitCheck> {
    return takeExternalSend(this.#store.db, sessionId, budgets);
  }

  /** The call's cost and the agent's rolling ceilings, all charged or none. */
  admitCall(call: CallFacts, ceilings: AgentCeilings): Promise<Admission> {
    return admitCall(this.#store, call, ceilings);
  }

  chargeEgress(who: CeilingCall, ceilings: AgentCeilings, bytes: number): Promise<void> {
    return chargeEgress(this.#store.db, who, ceilings, bytes);
  }

  readPrivateRecently(who: CeilingCall, ceilings: AgentCeilings): Promise<boolean> {
    return readPrivateRecently(this.#store.db, who, ceilings);
  }

  recordPrivateRead(who: CeilingCall, ceilings: AgentCeilings): Promise<void> {
    return recordPrivateRead(this.#store.db, who, ceilings);
  }

  /**
   * Runs `check` on counters inside one transaction that is always rolled back: the very
   * statements a charge runs, so it says exactly whether the limits would refuse the call now,
   * and nothing is charged (check before asking, charge after approval: docs/architecture.md §3).
   */
  async dryRun<T>(check: (counters: CallCounters) => Promise<T>): Promise<T> {
    let out: { value: T } | null = null;
    await this.#store.db
      .transaction()
      .execute(async (trx) => {
        out = {
          value: await check(
            new CallCounters({ db: trx, chargeCounters: this.#store.chargeCounters }),
          ),
        };
        throw ROLLBACK;
      })
      .catch((err: unknown) => {
        if (err !== ROLLBACK) throw err;
      });
    if (out === null) throw new Error('the dry run ended without a verdict');
    return (out as { value: T }).value;
  }

  /** Expired rate and ceiling counters removed; how many of each. */
  async sweep(now: Date): Promise<{ rateCounters: number; ceilingCounters: number }> {
    const rateCounters = await sweepRateCounters(this.#store.db, now);
    const ceilingCounters = await sweepCeilingCounters(this.#store.db, now);
    return { rateCounters, ceilingCounters };
  }
}
