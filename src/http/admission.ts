/**
 * @module Admission control for the HTTP port (REST and /mcp). A bounded number of
 * requests run at once; a few more wait in a bounded queue for a bounded time; everything past
 * that is answered at once with 503 and Retry-After instead of waiting for ever. One caller
 * (one bearer credential) holds at most a share of the running and queued slots (429), so one
 * agent cannot take all of them. Probes are never queued: /healthz and /readyz answer under load.
 */
import { createHash } from 'node:crypto';
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { ToolgateError } from '../core/index.js';

export interface AdmissionOptions {
  /** Requests handled at once by this process. */
  readonly maxInFlight: number;
  /** Running plus queued requests of one caller: a share, so others keep a way in. */
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

/** How often the event-loop delay is read (and its histogram reset). */
const LAG_WINDOW_MS = 250;

/** Seconds a refused caller is told to wait: slots free in milliseconds, so one second is plenty. */
const RETRY_AFTER_S = 1;

interface Waiter {
  readonly admit: () => void;
  readonly timer: NodeJS.Timeout;
}

export type Admitted = { readonly ok: true; readonly release: () => void };
export type Refused = {
  readonly ok: false;
  readonly error: ToolgateError<'LIMIT_REACHED' | 'OVERLOADED'>;
};

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
  readonly #queue: Waiter[] = [];
  #lagging = false;
  readonly #delay: IntervalHistogram;
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

  /** Resolves once the request may run, or with the refusal; never waits past maxQueueWaitMs. */
  enter(caller: string): Promise<Admitted | Refused> {
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

  #ticket(caller: string): Admitted {
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

function refused(
  code: 'LIMIT_REACHED' | 'OVERLOADED',
  message: string,
  limit: 'in_flight_per_caller' | 'in_flight' | 'queue' | 'event_loop',
  max: number,
): Refused {
  return {
    ok: false,
    error: new ToolgateError(code, message, { limit, max, retryAfterSeconds: RETRY_AFTER_S }),
  };
}
