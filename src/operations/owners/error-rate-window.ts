/**
 * @module A tool version's error rate over a sliding window, from the call outcomes the audit
 * writer already commits (docs/architecture.md §8, C16): a ring of time buckets per tool version,
 * O(1) per record, no query. It reports a crossing once — when the rate rises above the threshold
 * with enough calls to mean something — and re-arms only after the rate falls back to it or below.
 */

export interface ErrorRateOptions {
  /** The window (default 5 minutes). */
  readonly windowMs: number;
  /** Buckets the window is cut into (default 10: the window slides in 30 s steps). */
  readonly buckets: number;
  /** An error rate above this fraction is a crossing (default 0.1). */
  readonly threshold: number;
  /** Fewer calls than this in the window never cross (one failure of one call is not a spike). */
  readonly minCalls: number;
  /** Tool versions tracked at once; past it the least recently seen is forgotten. */
  readonly maxTracked: number;
}

export const DEFAULT_ERROR_RATE: ErrorRateOptions = {
  windowMs: 5 * 60_000,
  buckets: 10,
  threshold: 0.1,
  minCalls: 20,
  maxTracked: 20_000,
};

export interface Crossing {
  readonly toolId: string;
  readonly version: string;
  readonly calls: number;
  readonly errors: number;
  readonly rate: number;
}

interface Track {
  readonly starts: number[];
  readonly calls: number[];
  readonly errors: number[];
  totalCalls: number;
  totalErrors: number;
  latched: boolean;
}

export class ErrorRateWindow {
  readonly #o: ErrorRateOptions;
  readonly #width: number;
  readonly #tracks = new Map<string, Track>();

  constructor(options: Partial<ErrorRateOptions> = {}) {
    this.#o = { ...DEFAULT_ERROR_RATE, ...options };
    this.#width = Math.max(1, Math.floor(this.#o.windowMs / this.#o.buckets));
  }

  get options(): ErrorRateOptions {
    return this.#o;
  }

  /** Counts one finished call at `atMs`; returns the crossing it caused, if any. */
  observe(toolId: string, version: string, atMs: number, error: boolean): Crossing | null {
    const key = `${toolId}@${version}`;
    let t = this.#tracks.get(key);
    if (t) {
      // Most recently seen last, so the first key is the one to forget.
      this.#tracks.delete(key);
    } else {
      const n = this.#o.buckets;
      t = {
        starts: new Array<number>(n).fill(-1),
        calls: new Array<number>(n).fill(0),
        errors: new Array<number>(n).fill(0),
        totalCalls: 0,
        totalErrors: 0,
        latched: false,
      };
      if (this.#tracks.size >= this.#o.maxTracked) {
        const oldest = this.#tracks.keys().next().value;
        if (oldest !== undefined) this.#tracks.delete(oldest);
      }
    }
    this.#tracks.set(key, t);
    const slot = Math.floor(atMs / this.#width);
    const i = slot % this.#o.buckets;
    // Buckets that fell out of the window are emptied before they are counted again.
    for (let j = 0; j < this.#o.buckets; j += 1) {
      const start = t.starts[j] ?? -1;
      if (start !== -1 && start <= slot - this.#o.buckets) this.#clear(t, j);
    }
    if (t.starts[i] !== slot) {
      this.#clear(t, i);
      t.starts[i] = slot;
    }
    t.calls[i] = (t.calls[i] ?? 0) + 1;
    t.totalCalls += 1;
    if (error) {
      t.errors[i] = (t.errors[i] ?? 0) + 1;
      t.totalErrors += 1;
    }
    const rate = t.totalErrors / t.totalCalls;
    if (rate <= this.#o.threshold) {
      t.latched = false;
      return null;
    }
    if (t.latched || t.totalCalls < this.#o.minCalls) return null;
    t.latched = true;
    return { toolId, version, calls: t.totalCalls, errors: t.totalErrors, rate };
  }

  #clear(t: Track, j: number): void {
    t.totalCalls -= t.calls[j] ?? 0;
    t.totalErrors -= t.errors[j] ?? 0;
    t.calls[j] = 0;
    t.errors[j] = 0;
    t.starts[j] = -1;
  }
}
