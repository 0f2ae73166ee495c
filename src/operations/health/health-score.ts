/**
 * @module A tool version's health score (C14), pure: the success rate of its recent probes and of
 * its recent live calls (passive health), each success weighted by its latency against the tool's
 * SLA target (1 within it, falling to 0.25 at four times it and beyond). Probes and calls count
 * half each when both are known. 0 while nothing is known (unchecked). A live call's failure
 * lowers the score only when callers other than its own failed too (`CallWindow`): one caller's
 * failures say something about its calls, not about the tool everyone shares.
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
export function healthScore(probes: Window, calls: Window): number {
  const p = probes.mean;
  const c = calls.mean;
  if (Number.isNaN(p) && Number.isNaN(c)) return 0;
  if (Number.isNaN(p)) return round(c);
  if (Number.isNaN(c)) return round(p);
  return round((p + c) / 2);
}

/**
 * The most recent live calls, each with its caller. `mean` counts the failures only while at
 * least `minCallers` distinct callers failed within the window; until then the failures are one
 * caller's word (its own arguments, its own doing) and the mean is that of the successes.
 */
export class CallWindow {
  readonly #values: Float64Array;
  readonly #callers: (string | null)[];
  readonly #minCallers: number;
  /** Failures in the window per caller; a caller leaves the map at zero. */
  readonly #failuresBy = new Map<string, number>();
  #next = 0;
  #count = 0;
  #failures = 0;
  #sum = 0;

  constructor(size: number, minCallers: number) {
    this.#values = new Float64Array(size);
    this.#callers = new Array<string | null>(size).fill(null);
    this.#minCallers = minCallers;
  }

  /** Outcomes the score counts now (failures only once corroborated). */
  get count(): number {
    return this.#corroborated() ? this.#count : this.#count - this.#failures;
  }

  get mean(): number {
    const n = this.count;
    return n === 0 ? Number.NaN : this.#sum / n;
  }

  push(quality: number, caller: string): void {
    const size = this.#values.length;
    if (this.#count === size) {
      this.#sum -= this.#values[this.#next] ?? 0;
      const gone = this.#callers[this.#next];
      if (gone !== null && gone !== undefined) this.#forget(gone);
    } else this.#count += 1;
    this.#values[this.#next] = quality;
    this.#callers[this.#next] = quality === 0 ? caller : null;
    if (quality === 0) {
      this.#failures += 1;
      this.#failuresBy.set(caller, (this.#failuresBy.get(caller) ?? 0) + 1);
    }
    this.#sum += quality;
    this.#next = (this.#next + 1) % size;
  }

  clear(): void {
    this.#next = 0;
    this.#count = 0;
    this.#failures = 0;
    this.#sum = 0;
    this.#failuresBy.clear();
    this.#callers.fill(null);
  }

  #corroborated(): boolean {
    return this.#failuresBy.size >= this.#minCallers;
  }

  #forget(caller: string): void {
    this.#failures -= 1;
    const n = (this.#failuresBy.get(caller) ?? 1) - 1;
    if (n <= 0) this.#failuresBy.delete(caller);
    else this.#failuresBy.set(caller, n);
  }
}

/** What `healthScore` reads of a window. */
interface Window {
  readonly mean: number;
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
