/**
 * @module Calls held open while a person decides their approval (C8, docs/mcp.md "Stock clients
 * wait for the person"). A front holding a call asks here to be woken when the approval it waits
 * for leaves `pending` — approved, rejected, withdrawn or expired — or when its bound has passed.
 * Decisions made in this process wake their waiters at once (the desk's `onDecided`); decisions
 * made elsewhere (the CLI, another replica) are found by one batched query per poll interval for
 * every approval waited on, never a query per waiter. Waking decides nothing: the front asks the
 * gate again, which decides (docs/architecture.md §3, step `approval`). Bounded: past `maxWaiting`
 * held calls in the process a call is not held, it is answered at once.
 */
import type { ApprovalOwner } from './approval-owner.js';
import type { ApprovalView } from './approval-view.js';

/** What a held call learns: its approval left `pending`, or it is still pending. */
export type WaitOutcome = 'settled' | 'pending';

export interface ApprovalWaitsOptions {
  /**
   * How often the store is asked which of the approvals waited on were settled elsewhere (the
   * CLI, another replica); in-process decisions wake at once. Default 1000 ms.
   */
  readonly pollMs?: number;
  /** Held calls in this process at once; past it a call is answered at once. Default 4096. */
  readonly maxWaiting?: number;
}

/** What the waits read of the approval desk. */
export interface ApprovalWaitsDesk {
  getOwned(id: string, owner: ApprovalOwner): Promise<ApprovalView | null>;
  settled(ids: readonly string[]): Promise<ReadonlySet<string>>;
}

const DEFAULT_POLL_MS = 1_000;
const DEFAULT_MAX_WAITING = 4_096;

type Wake = (outcome: WaitOutcome) => void;

export class ApprovalWaits {
  readonly #desk: ApprovalWaitsDesk;
  readonly #pollMs: number;
  readonly #maxWaiting: number;
  /** Per approval id, the held calls waiting for it. */
  readonly #waiting = new Map<string, Set<Wake>>();
  /** Held calls, and waits that took a place and are still reading their approval. */
  #count = 0;
  #timer: NodeJS.Timeout | null = null;
  #polling = false;

  constructor(desk: ApprovalWaitsDesk, options: ApprovalWaitsOptions = {}) {
    this.#desk = desk;
    this.#pollMs = options.pollMs ?? DEFAULT_POLL_MS;
    this.#maxWaiting = options.maxWaiting ?? DEFAULT_MAX_WAITING;
  }

  /**
   * Waits until approval `id` leaves `pending`, at most `timeoutMs`, or until `signal` aborts.
   * Only `owner`'s approval is waited for (in any run of that principal): another's, an unknown
   * one, or one over the process bound is answered `pending` at once. Never throws: a store that
   * cannot be read leaves the call `pending` at its bound, as if nobody had decided.
   */
  async wait(
    id: string,
    owner: ApprovalOwner,
    options: { readonly timeoutMs: number; readonly signal: AbortSignal },
  ): Promise<WaitOutcome> {
    if (options.timeoutMs <= 0 || options.signal.aborted) return 'pending';
    if (this.#count >= this.#maxWaiting) return 'pending';
    // The place is taken before anything is awaited: parallel waits cannot overshoot the bound.
    this.#count += 1;
    let held = false;
    try {
      const view = await this.#desk.getOwned(id, owner).catch(() => null);
      if (view === null || options.signal.aborted) return 'pending';
      if (view.status !== 'pending') return 'settled';
      held = true;
      return await this.#hold(id, options);
    } finally {
      if (!held) this.#count -= 1;
    }
  }

  /** Registers one held call until it is woken, its bound passes or its signal aborts. */
  #hold(
    id: string,
    options: { readonly timeoutMs: number; readonly signal: AbortSignal },
  ): Promise<WaitOutcome> {
    return new Promise<WaitOutcome>((resolve) => {
      let done = false;
      const finish: Wake = (outcome) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        options.signal.removeEventListener('abort', aborted);
        this.#forget(id, finish);
        resolve(outcome);
      };
      const aborted = () => finish('pending');
      // A held call never keeps a stopping process alive: its front ends it (a drain, a closed pipe).
      const timer = setTimeout(() => finish('pending'), options.timeoutMs);
      timer.unref();
      options.signal.addEventListener('abort', aborted, { once: true });
      this.#add(id, finish);
    });
  }

  /** Wakes the calls waiting for `id` (it was decided in this process). Never throws. */
  poke(id: string): void {
    for (const wake of [...(this.#waiting.get(id) ?? [])]) wake('settled');
  }

  #add(id: string, wake: Wake): void {
    let wakes = this.#waiting.get(id);
    if (!wakes) {
      wakes = new Set();
      this.#waiting.set(id, wakes);
    }
    wakes.add(wake);
    if (!this.#timer) {
      this.#timer = setInterval(() => void this.#poll(), this.#pollMs);
      this.#timer.unref();
    }
  }

  #forget(id: string, wake: Wake): void {
    const wakes = this.#waiting.get(id);
    if (!wakes?.delete(wake)) return;
    this.#count -= 1;
    if (wakes.size === 0) this.#waiting.delete(id);
    if (this.#waiting.size === 0) this.#stop();
  }

  #stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** One query for every approval waited on; a poll still running is not overtaken. */
  async #poll(): Promise<void> {
    if (this.#polling || this.#waiting.size === 0) return;
    this.#polling = true;
    try {
      const settled = await this.#desk.settled([...this.#waiting.keys()]);
      for (const id of settled) this.poke(id);
    } catch {
      // The store is unreachable: the calls stay held until their bound, answered pending.
    } finally {
      this.#polling = false;
    }
  }
}
