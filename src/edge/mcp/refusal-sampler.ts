/**
 * @module Bounded audit of refusals made before authentication. Anyone can send a request with a
 * bad header, so one audit record per refusal would let a stranger grow the audit log without
 * limit. Per action and window, the first few refusals are recorded in full (a sample); the rest
 * are counted, and one summary record with the count is written when the window ends. An attack
 * is thus always visible, and costs at most `sample + 1` records per action per window.
 */
import type { CallerValues, SecurityEvents } from '../../api/index.js';

export interface SamplerOptions {
  /** Refusals recorded in full per action and window. */
  readonly sample?: number;
  readonly windowMs?: number;
}

const DEFAULT_SAMPLE = 5;
const DEFAULT_WINDOW_MS = 60_000;

interface Window {
  recorded: number;
  suppressed: number;
  readonly startedAt: string;
}

export class RefusalSampler {
  readonly #security: SecurityEvents;
  readonly #sample: number;
  readonly #windows = new Map<string, Window>();
  readonly #timer: NodeJS.Timeout;

  constructor(security: SecurityEvents, options: SamplerOptions = {}) {
    this.#security = security;
    this.#sample = options.sample ?? DEFAULT_SAMPLE;
    this.#timer = setInterval(() => void this.flush(), options.windowMs ?? DEFAULT_WINDOW_MS);
    this.#timer.unref();
  }

  /**
   * Records the refusal in full while the window's sample lasts; counts it after that. `caller`:
   * what the refuser sent, kept only as keyed hashes (SecurityEvents.record).
   */
  async record(
    action: string,
    details: Record<string, unknown>,
    caller?: CallerValues,
  ): Promise<void> {
    let w = this.#windows.get(action);
    if (!w) {
      w = { recorded: 0, suppressed: 0, startedAt: new Date().toISOString() };
      this.#windows.set(action, w);
    }
    if (w.recorded >= this.#sample) {
      w.suppressed += 1;
      return;
    }
    w.recorded += 1;
    await this.#security.record(action, 'mcp', { ...details, sampled: true }, caller);
  }

  /** Ends every window: one summary record for each action with refusals beyond its sample. */
  async flush(): Promise<void> {
    const windows = [...this.#windows];
    this.#windows.clear();
    for (const [action, w] of windows) {
      if (w.suppressed === 0) continue;
      await this.#security
        .record(`${action}.summary`, 'mcp', {
          since: w.startedAt,
          recorded: w.recorded,
          not_recorded: w.suppressed,
        })
        .catch(() => {});
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
  }
}
