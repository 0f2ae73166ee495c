/**
 * @module A tool version's health score (C14), pure: the success rate of its recent probes and of
 * its recent live calls (passive health), each success weighted by its latency against the tool's
 * SLA target (1 within it, falling to 0.25 at four times it and beyond). Probes and calls count
 * half each when both are known. 0 while nothing is known (unchecked).
 */

/** A fixed-size window of the most recent outcomes, as quality values 0..1 (0: a failure). */
export class OutcomeWindow {
  readonly #values: Float64Array;
  #next = 0;
  #count = 0;
  #sum = 0;

  constructor(size: number) {
    this.#values = new Float64Array(size);
  }

  get count(): number {
    return this.#count;
  }

  /** Mean quality over the window; NaN when empty. */
  get mean(): number {
    return this.#count === 0 ? Number.NaN : this.#sum / this.#count;
  }

  push(quality: number): void {
    const size = this.#values.length;
    if (this.#count === size) this.#sum -= this.#values[this.#next] ?? 0;
    else this.#count += 1;
    this.#values[this.#next] = quality;
    this.#sum += quality;
    this.#next = (this.#next + 1) % size;
  }

  clear(): void {
    this.#next = 0;
    this.#count = 0;
    this.#sum = 0;
  }
}

/** The quality of one outcome: 0 for a failure; for a success, 1 within the latency target. */
export function outcomeQuality(ok: boolean, latencyMs: number, targetMs: number): number {
  if (!ok) return 0;
  if (latencyMs <= targetMs) return 1;
  return Math.max(0.25, 1 - (0.75 * (latencyMs - targetMs)) / (3 * targetMs));
}

/** Probes and calls, half each when both are known; 0 when neither is (unchecked). */
export function healthScore(probes: OutcomeWindow, calls: OutcomeWindow): number {
  const p = probes.mean;
  const c = calls.mean;
  if (Number.isNaN(p) && Number.isNaN(c)) return 0;
  if (Number.isNaN(p)) return round(c);
  if (Number.isNaN(c)) return round(p);
  return round((p + c) / 2);
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
