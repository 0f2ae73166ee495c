/**
 * @module Webhook delivery: a JSON POST to one configured URL, bounded (deliveries in flight, a
 * queue behind them; past both a message is dropped and counted), each attempt timed out, retried
 * with exponential backoff and jitter on 5xx, timeouts and connection failures up to a bounded
 * number of attempts — never on 4xx, never following a redirect (the URL was checked, its target
 * was not). `send` never waits and never throws; every outcome is reported.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** Final outcomes (`delivered`, `rejected`, `failed`, `dropped`) and per-attempt ones. */
export type DeliveryOutcome =
  | 'delivered'
  | 'rejected'
  | 'failed'
  | 'dropped'
  | 'retried'
  | 'timed_out';

export interface WebhookDeliveryOptions {
  readonly url: string;
  readonly timeoutMs: number;
  /** Attempts per message, the first included (1: no retry). */
  readonly maxAttempts: number;
  /** Wait before the first retry; doubled for each later one. */
  readonly backoffMs: number;
  readonly maxInFlight: number;
  /** Messages waiting behind those in flight (0: drop at once when all are busy). */
  readonly maxQueue: number;
  readonly userAgent: string;
  /**
   * How the request goes out: the egress rules' fetch (core Outbound), which checks the URL and
   * the address it dials at this moment. Never the global fetch.
   */
  readonly fetch: typeof fetch;
}

export class WebhookDelivery {
  readonly #o: WebhookDeliveryOptions;
  readonly #onOutcome: (o: DeliveryOutcome) => void;
  readonly #queue: string[] = [];
  readonly #active = new Set<Promise<void>>();
  readonly #closing = new AbortController();

  constructor(options: WebhookDeliveryOptions, onOutcome: (o: DeliveryOutcome) => void) {
    this.#o = options;
    this.#onOutcome = onOutcome;
  }

  /** Queues one message; never waits for it and never throws. */
  send(payload: unknown): void {
    if (this.#closing.signal.aborted) {
      this.#report('dropped');
      return;
    }
    const body = JSON.stringify(payload);
    if (this.#active.size < this.#o.maxInFlight) this.#start(body);
    else if (this.#queue.length < this.#o.maxQueue) this.#queue.push(body);
    else this.#report('dropped');
  }

  #start(body: string): void {
    const p = this.#deliver(body).finally(() => {
      this.#active.delete(p);
      const next = this.#queue.shift();
      if (next !== undefined) this.#start(next);
    });
    this.#active.add(p);
  }

  #report(o: DeliveryOutcome): void {
    try {
      this.#onOutcome(o);
    } catch {
      // Counting must not break delivery.
    }
  }

  async #deliver(body: string): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      const verdict = await this.#attempt(body);
      if (verdict === 'delivered' || verdict === 'rejected') {
        this.#report(verdict);
        return;
      }
      if (this.#closing.signal.aborted || attempt >= this.#o.maxAttempts) {
        this.#report('failed');
        return;
      }
      this.#report('retried');
      const wait = this.#o.backoffMs * 2 ** (attempt - 1) * (1 + Math.random() / 2);
      try {
        await sleep(wait, undefined, { signal: this.#closing.signal });
      } catch {
        this.#report('failed');
        return;
      }
    }
  }

  async #attempt(body: string): Promise<'delivered' | 'rejected' | 'retry'> {
    try {
      const res = await this.#o.fetch(this.#o.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': this.#o.userAgent },
        body,
        redirect: 'manual',
        signal: AbortSignal.any([AbortSignal.timeout(this.#o.timeoutMs), this.#closing.signal]),
      });
      // The body is not needed; release the connection.
      await res.body?.cancel();
      if (res.status >= 200 && res.status < 300) return 'delivered';
      // 5xx is the receiver's trouble and may pass; 4xx (and a redirect) will not.
      return res.status >= 500 ? 'retry' : 'rejected';
    } catch (err) {
      if (err instanceof DOMException && err.name === 'TimeoutError') this.#report('timed_out');
      return 'retry';
    }
  }

  /** Resolves when every message accepted so far has been delivered or given up. */
  async settled(): Promise<void> {
    while (this.#active.size > 0) await Promise.allSettled([...this.#active]);
  }

  /** Stops: waits up to `graceMs` for what is in flight, then abandons the rest (counted failed). */
  async close(graceMs = 2_000): Promise<void> {
    const grace = new AbortController();
    await Promise.race([
      this.settled(),
      sleep(graceMs, undefined, { signal: grace.signal }).catch(() => {}),
    ]);
    grace.abort();
    this.#closing.abort();
    for (const _ of this.#queue.splice(0)) this.#report('dropped');
    await this.settled();
  }
}
