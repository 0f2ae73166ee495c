/**
 * @module One tool version's circuit breaker (C14): it opens after a run of consecutive failures
 * (probes and calls alike), stays open for a cool-down, then half-opens: one test — the next
 * probe, or one live call for a tool without a probe — closes it on success or opens it again.
 * Pure state over times the caller passes; no timers of its own.
 */
import type { BreakerState } from './health-state.js';

export class CircuitBreaker {
  #state: BreakerState = 'closed';
  #failures = 0;
  #openedAt = 0;
  #trialInFlight = false;
  readonly #threshold: number;
  readonly #openMs: number;

  constructor(threshold: number, openMs: number) {
    this.#threshold = threshold;
    this.#openMs = openMs;
  }

  get state(): BreakerState {
    return this.#state;
  }

  get consecutiveFailures(): number {
    return this.#failures;
  }

  /** When an open breaker may half-open (ms since the epoch); 0 when it is not open. */
  get halfOpensAt(): number {
    return this.#state === 'open' ? this.#openedAt + this.#openMs : 0;
  }

  /** Open → half-open once the cool-down has passed; answers whether it moved. */
  tryHalfOpen(now: number): boolean {
    if (this.#state !== 'open' || now < this.#openedAt + this.#openMs) return false;
    this.#state = 'half_open';
    this.#trialInFlight = false;
    return true;
  }

  /** A half-open breaker lets exactly one live call through as its test; others fail fast. */
  takeTrial(): boolean {
    if (this.#state !== 'half_open' || this.#trialInFlight) return false;
    this.#trialInFlight = true;
    return true;
  }

  /** Records one outcome; answers whether the breaker's state changed. */
  record(ok: boolean, now: number): boolean {
    const before = this.#state;
    this.#trialInFlight = false;
    if (ok) {
      this.#failures = 0;
      if (this.#state !== 'closed') this.#state = 'closed';
    } else {
      this.#failures += 1;
      if (this.#state === 'half_open' || this.#failures >= this.#threshold) {
        this.#state = 'open';
        this.#openedAt = now;
      }
    }
    return before !== this.#state;
  }
}
