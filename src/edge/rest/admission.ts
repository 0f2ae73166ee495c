/**
 * @module Admission control for the HTTP port (REST and /mcp). A bounded number of
 * requests run at once; a few more wait in a bounded queue for a bounded time; everything past
 * that is answered at once with 503 and Retry-After instead of waiting for ever. Shares (429):
 * before authentication one bearer string holds at most a share of the running and queued slots;
 * once the front knows who is asking, the ticket is `claim`ed for the principal — its agent and
 * the user it acts for — and neither may hold more than a share of the running slots, however
 * many credentials it presents. A ticket is for work: a request that turns into a standing stream
 * or a wait gives its slot back (`release`, `pause`/`resume`) and is counted apart
 * (standing-limits.ts). Probes are never queued: /healthz and /readyz answer under load.
 */
import { createHash } from 'node:crypto';
import { type ELDHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { type CapDetails, ToolgateError } from '../../core/index.js';

export interface AdmissionOptions {
  /** Requests handled at once by this process. */
  readonly maxInFlight: number;
  /**
   * Running plus queued requests of one bearer string, and running requests of one agent and of
   * one user: a share, so others keep a way in.
   */
  readonly maxInFlightPerCaller: number;
  /** Requests that may wait for a slot; past it the answer is 503 at once. */
  readonly maxQueued: number;
  /** The longest a request waits in the queue before it is answered 503. */
  readonly maxQueueWaitMs: number;
  /**
   * Event-loop delay past which new requests are refused (503) until it recovers. On a starved
   * host the requests that wait longest have not even been read yet: the counts above never see
   * them, the loop's delay does.
   */
  readonly maxEventLoopDelayMs: number;
}

export const DEFAULT_ADMISSION: AdmissionOptions = {
  maxInFlight: 64,
  maxInFlightPerCaller: 16,
  maxQueued: 128,
  maxQueueWaitMs: 2_000,
  maxEventLoopDelayMs: 1_000,
};

/**
 * The operators' lane (console, admin routes, docs): its own slots, so agents' load never starves
 * it. Operators are few; an agent presenting nothing it may use there is refused at authentication.
 */
export const DEFAULT_OPERATOR_ADMISSION: AdmissionOptions = {
  maxInFlight: 32,
  maxInFlightPerCaller: 16,
  maxQueued: 64,
  maxQueueWaitMs: 2_000,
  maxEventLoopDelayMs: 0,
};

/** How often the event-loop delay is read (and its histogram reset). */
const LAG_WINDOW_MS = 250;

/** Seconds a refused caller is told to wait: slots free in milliseconds, so one second is plenty. */
const RETRY_AFTER_S = 1;

interface Waiter {
  readonly admit: () => void;
  readonly timer: NodeJS.Timeout;
}

export type Refused = {
  readonly ok: false;
  readonly error: ToolgateError<'LIMIT_REACHED' | 'OVERLOADED'>;
};

/** A principal's share key: its agent, or the user it acts for (never a credential string). */
export interface Share {
  readonly key: string;
  readonly limit: 'in_flight_per_agent' | 'in_flight_per_user';
}

/** The shares of an authenticated principal: its agent, and its user when it acts for one. */
export function principalShares(agentId: string, userId: string | undefined): Share[] {
  return [
    { key: `agent:${agentId}`, limit: 'in_flight_per_agent' },
    ...(userId !== undefined
      ? [{ key: `user:${userId}`, limit: 'in_flight_per_user' } as const]
      : []),
  ];
}

/** A held slot. Every method is safe to call in any state; `release` is final. */
export interface Admitted {
  readonly ok: true;
  /** Frees everything the request holds; nothing can be held again after it. */
  release(): void;
  /** Counts the request for its principal's shares; a refusal frees nothing (the caller answers). */
  claim(shares: readonly Share[]): Refused | null;
  /** Gives the slot and the shares back while the request waits for something outside it. */
  pause(): void;
  /** Takes a slot and the same shares again (queued like a new request), or says why not. */
  resume(): Promise<Refused | null>;
}

/** The caller's share key: a hash of its credential (never the credential), else its address. */
export function callerKey(authorization: string | undefined, address: string): string {
  const token = /^Bearer ([^\s]+)$/i.exec(authorization ?? '')?.[1];
  return token
    ? `t:${createHash('sha256').update(token).digest('base64url').slice(0, 22)}`
    : `a:${address}`;
}

export class Admission {
  readonly #o: AdmissionOptions;
  #running = 0;
  /** Running plus queued requests per caller; a key is deleted at zero, so the map stays small. */
  readonly #byCaller = new Map<string, number>();
  /** Running requests per agent and per user (claimed tickets); deleted at zero. */
  readonly #byPrincipal = new Map<string, number>();
  readonly #queue: Waiter[] = [];
  #lagging = false;
  readonly #delay: ELDHistogram;
  readonly #sampler: NodeJS.Timeout;

  constructor(options: AdmissionOptions) {
    for (const [name, value] of Object.entries(options)) {
      if (name === 'maxEventLoopDelayMs' && value === 0) continue; // 0: not watched
      if (!Number.isInteger(value) || value < (name === 'maxQueued' ? 0 : 1)) {
        throw new ToolgateError('INPUT_INVALID', `admission ${name} must be a positive integer`, {
          problems: [],
        });
      }
    }
    this.#o = options;
    this.#delay = monitorEventLoopDelay({ resolution: 20 });
    this.#delay.enable();
    let previousOver = false;
    this.#sampler = setInterval(() => {
      // Two windows in a row over the limit: one long synchronous step (start-up, a big apply)
      // is not overload. A window without lag lifts the refusal.
      const over =
        this.#o.maxEventLoopDelayMs > 0 && this.#delay.max / 1e6 > this.#o.maxEventLoopDelayMs;
      this.#lagging = over && previousOver;
      previousOver = over;
      this.#delay.reset();
    }, LAG_WINDOW_MS);
    this.#sampler.unref();
  }

  /** Whether the last window's event-loop delay was over the limit (new requests are refused). */
  get lagging(): boolean {
    return this.#lagging;
  }

  stop(): void {
    clearInterval(this.#sampler);
    this.#delay.disable();
  }

  get running(): number {
    return this.#running;
  }

  get queued(): number {
    return this.#queue.length;
  }

  /** Running requests claimed for one share key (an agent's or a user's). */
  heldBy(key: string): number {
    return this.#byPrincipal.get(key) ?? 0;
  }

  /** Resolves once the request may run, or with the refusal; never waits past maxQueueWaitMs. */
  async enter(caller: string): Promise<Admitted | Refused> {
    const slot = await this.#acquire(caller);
    return slot.ok ? new Ticket(this, caller, slot.release) : slot;
  }

  /** Internal to the ticket: a slot for `caller`, or the refusal. */
  acquire(caller: string): Promise<{ ok: true; release: () => void } | Refused> {
    return this.#acquire(caller);
  }

  /** Internal to the ticket: counts `shares` unless one is used up (then nothing is counted). */
  take(shares: readonly Share[]): Refused | null {
    for (const share of shares) {
      if ((this.#byPrincipal.get(share.key) ?? 0) >= this.#o.maxInFlightPerCaller) {
        const who = share.limit === 'in_flight_per_agent' ? 'agent' : 'user';
        return refused(
          'LIMIT_REACHED',
          `this ${who} has ${this.#o.maxInFlightPerCaller} requests running, whichever credentials carry them; retry after one finishes`,
          share.limit,
          this.#o.maxInFlightPerCaller,
        );
      }
    }
    for (const share of shares)
      this.#byPrincipal.set(share.key, (this.#byPrincipal.get(share.key) ?? 0) + 1);
    return null;
  }

  /** Internal to the ticket: gives back what `take` counted. */
  give(shares: readonly Share[]): void {
    for (const share of shares) {
      const n = (this.#byPrincipal.get(share.key) ?? 1) - 1;
      if (n <= 0) this.#byPrincipal.delete(share.key);
      else this.#byPrincipal.set(share.key, n);
    }
  }

  #acquire(caller: string): Promise<{ ok: true; release: () => void } | Refused> {
    const held = this.#byCaller.get(caller) ?? 0;
    if (held >= this.#o.maxInFlightPerCaller) {
      return Promise.resolve(
        refused(
          'LIMIT_REACHED',
          `this caller has ${this.#o.maxInFlightPerCaller} requests running or waiting; retry after one finishes`,
          'in_flight_per_caller',
          this.#o.maxInFlightPerCaller,
        ),
      );
    }
    if (this.#lagging) {
      return Promise.resolve(
        refused(
          'OVERLOADED',
          'the gateway is too busy to answer in time; retry later',
          'event_loop',
          this.#o.maxEventLoopDelayMs,
        ),
      );
    }
    if (this.#running < this.#o.maxInFlight && this.#queue.length === 0) {
      this.#byCaller.set(caller, held + 1);
      this.#running += 1;
      return Promise.resolve(this.#ticket(caller));
    }
    if (this.#queue.length >= this.#o.maxQueued) {
      return Promise.resolve(
        refused(
          'OVERLOADED',
          'the gateway is at capacity; retry later',
          'queue',
          this.#o.maxQueued,
        ),
      );
    }
    this.#byCaller.set(caller, held + 1);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        admit: () => {
          clearTimeout(waiter.timer);
          this.#running += 1;
          resolve(this.#ticket(caller));
        },
        timer: setTimeout(() => {
          const at = this.#queue.indexOf(waiter);
          if (at >= 0) this.#queue.splice(at, 1);
          this.#drop(caller);
          resolve(
            refused(
              'OVERLOADED',
              `no slot freed within ${this.#o.maxQueueWaitMs} ms; retry later`,
              'in_flight',
              this.#o.maxInFlight,
            ),
          );
        }, this.#o.maxQueueWaitMs),
      };
      waiter.timer.unref();
      this.#queue.push(waiter);
    });
  }

  #ticket(caller: string): { ok: true; release: () => void } {
    let done = false;
    return {
      ok: true,
      release: () => {
        if (done) return;
        done = true;
        this.#running -= 1;
        this.#drop(caller);
        // First come, first served: the oldest waiter takes the freed slot.
        this.#queue.shift()?.admit();
      },
    };
  }

  #drop(caller: string): void {
    const n = (this.#byCaller.get(caller) ?? 1) - 1;
    if (n <= 0) this.#byCaller.delete(caller);
    else this.#byCaller.set(caller, n);
  }
}

/**
 * One request's hold on the port: its slot (and bearer-string share), and the principal shares
 * claimed once it authenticated. Paused, it holds nothing; released, it never holds again.
 */
class Ticket implements Admitted {
  readonly ok = true as const;
  readonly #admission: Admission;
  readonly #caller: string;
  #slot: (() => void) | null;
  #shares: readonly Share[] = [];
  #sharesHeld = false;
  #ended = false;

  constructor(admission: Admission, caller: string, slot: () => void) {
    this.#admission = admission;
    this.#caller = caller;
    this.#slot = slot;
  }

  claim(shares: readonly Share[]): Refused | null {
    if (this.#ended || this.#slot === null) return null;
    if (this.#sharesHeld) this.#admission.give(this.#shares);
    this.#sharesHeld = false;
    const refusal = this.#admission.take(shares);
    if (refusal) return refusal;
    this.#shares = shares;
    this.#sharesHeld = true;
    return null;
  }

  release(): void {
    this.#ended = true;
    this.pause();
  }

  pause(): void {
    if (this.#sharesHeld) this.#admission.give(this.#shares);
    this.#sharesHeld = false;
    const slot = this.#slot;
    this.#slot = null;
    slot?.();
  }

  async resume(): Promise<Refused | null> {
    if (this.#slot !== null) return null;
    if (this.#ended) return refused('OVERLOADED', 'the request has ended', 'in_flight', 0);
    const slot = await this.#admission.acquire(this.#caller);
    if (!slot.ok) return slot;
    if (this.#ended) {
      slot.release();
      return refused('OVERLOADED', 'the request has ended', 'in_flight', 0);
    }
    this.#slot = slot.release;
    const refusal = this.#admission.take(this.#shares);
    if (refusal) {
      this.pause();
      return refusal;
    }
    this.#sharesHeld = true;
    return null;
  }
}

function refused(
  code: 'LIMIT_REACHED' | 'OVERLOADED',
  message: string,
  limit: CapDetails['limit'],
  max: number,
): Refused {
  return {
    ok: false,
    error: new ToolgateError(code, message, { limit, max, retryAfterSeconds: RETRY_AFTER_S }),
  };
}
