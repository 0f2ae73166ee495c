/**
 * @module One tool version's circuit breaker (C14). The breaker is shared by every caller of the
 * version, so what opens it must be more than one caller's word: it opens after a run of
 * consecutive failures (no success between them) that the gateway's own probe is part of, or that
 * came from at least `minCallers` distinct callers (principals: agent and user). A caller whose
 * calls fail on purpose therefore only ever fails its own calls (docs/security-model.md "Shared
 * slots, streams and breakers"). It stays open for a cool-down, then half-opens: the next probe,
 * or, for a tool without a probe, one live call at a time tests it; a success closes it. A failed
 * trial call counts against its caller only: that caller gets no second trial in this half-open
 * period, and the breaker opens again once trials of `minCallers` callers (or a probe) failed.
 * Pure state over times the caller passes; no timers of its own.
 */
import type { BreakerState } from './health-state.js';

/** Who an outcome came from: the monitor's own probe, or one caller of the tool. */
export type OutcomeSource = { readonly kind: 'probe' } | { readonly kind: 'call'; caller: string };

export const PROBE_SOURCE: OutcomeSource = Object.freeze({ kind: 'probe' });

/**
 * Callers remembered per run of failures: past this many, the run has more distinct callers than
 * any sane `minCallers`, so the set stops growing (memory stays bounded whatever an attacker sends).
 */
const MAX_REMEMBERED_CALLERS = 64;

export class CircuitBreaker {
  #state: BreakerState = 'closed';
  #failures = 0;
  /** Distinct callers among the current run of failures (bounded). */
  readonly #failingCallers = new Set<string>();
  /** Whether a probe failed in the current run of failures. */
  #probeFailed = false;
  #openedAt = 0;
  #trialInFlight = false;
  /** Callers whose trial call failed in this half-open period: no second trial for them. */
  readonly #failedTrials = new Set<string>();
  readonly #threshold: number;
  readonly #openMs: number;
  readonly #minCallers: number;

  constructor(threshold: number, openMs: number, minCallers: number) {
    this.#threshold = threshold;
    this.#openMs = openMs;
    this.#minCallers = minCallers;
  }

  get state(): BreakerState {
    return this.#state;
  }

  get consecutiveFailures(): number {
    return this.#failures;
  }

  /** Distinct callers among the current run of failures (capped at a small bound). */
  get failingCallers(): number {
    return this.#failingCallers.size;
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
    this.#failedTrials.clear();
    return true;
  }

  /**
   * A half-open breaker lets exactly one live call through at a time as its test, and never a
   * second one of a caller whose trial already failed; others fail fast.
   */
  takeTrial(caller: string): boolean {
    if (this.#state !== 'half_open' || this.#trialInFlight) return false;
    if (this.#failedTrials.has(caller)) return false;
    this.#trialInFlight = true;
    return true;
  }

  /** Records one outcome; answers whether the breaker's state changed. */
  record(ok: boolean, now: number, source: OutcomeSource): boolean {
    const before = this.#state;
    this.#trialInFlight = false;
    if (ok) {
      this.#failures = 0;
      this.#failingCallers.clear();
      this.#probeFailed = false;
      this.#failedTrials.clear();
      this.#state = 'closed';
      return before !== this.#state;
    }
    this.#failures += 1;
    if (source.kind === 'probe') this.#probeFailed = true;
    else if (this.#failingCallers.size < MAX_REMEMBERED_CALLERS)
      this.#failingCallers.add(source.caller);
    if (this.#state === 'half_open') {
      // A failed probe is the gateway's own test; a failed trial call counts for its caller only.
      if (source.kind === 'call') {
        if (this.#failedTrials.size < MAX_REMEMBERED_CALLERS) this.#failedTrials.add(source.caller);
        if (this.#failedTrials.size < this.#minCallers) return false;
      }
      this.#open(now);
    } else if (this.#failures >= this.#threshold && this.#corroborated()) {
      this.#open(now);
    }
    return before !== this.#state;
  }

  /** The run of failures is more than one caller's word: a probe failed, or several callers did. */
  #corroborated(): boolean {
    return this.#probeFailed || this.#failingCallers.size >= this.#minCallers;
  }

  #open(now: number): void {
    this.#state = 'open';
    this.#openedAt = now;
    this.#failedTrials.clear();
  }
}
