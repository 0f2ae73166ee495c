/**
 * @module The audit sequencer on PostgreSQL (docs/architecture.md §5, "The audit log across
 * replicas"): while this process leads the fleet (fleet.ts, the leader elected with a session
 * advisory lock, handed over when its connection ends), it integrates what every replica staged
 * (audit-integrate.ts). It is woken by a notification on `toolgate_audit_staged` (sent by a
 * replica that staged records while the sequencer may have been idle), by its own process's
 * staging at once, and otherwise looks every `pollMs`: a record waits at most about a poll and
 * one integration before it is in the chain, whichever replica wrote it. Under load it integrates
 * back to back, so each transaction takes whatever was staged meanwhile (batches grow with load).
 *
 * Being the leader only decides who does the work: every integration runs under the chain lock,
 * so a deposed leader still finishing a step, or any process integrating by itself (a barrier
 * that waited too long, a process closing), never integrates a record twice.
 */
import type { SequencerOptions } from '../audit-append.js';
import type { Fleet } from '../fleet.js';
import { FLEET_CHANNELS } from '../fleet.js';
import type { Integrated } from './audit-integrate.js';

export const DEFAULT_MAX_DELAY_MS = 200;

export class AuditSequencer {
  readonly #integrate: () => Promise<Integrated>;
  readonly #options: SequencerOptions;
  readonly #pollMs: number;
  #leading = false;
  #stopped = false;
  #running: Promise<void> | null = null;
  #wake: (() => void) | null = null;
  #woken = false;
  #unsubscribe: (() => void)[] = [];

  constructor(integrate: () => Promise<Integrated>, options: SequencerOptions = {}) {
    this.#integrate = integrate;
    this.#options = options;
    this.#pollMs = Math.max(5, Math.floor((options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS) / 4));
  }

  /** Whether this process integrates now (it leads the fleet and was not stopped). */
  get leading(): boolean {
    return this.#leading && !this.#stopped;
  }

  get maxDelayMs(): number {
    return this.#options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
  }

  /**
   * Integrates whenever this process leads `fleet`. With `campaign`, it joins the election for
   * that (serve does); without, it follows the leadership this process holds for its other
   * duties (detectors, probes), and a process that holds none never integrates here. It listens
   * for staging notifications only while it leads.
   */
  start(fleet: Fleet, campaign: boolean): void {
    let unlisten: (() => void) | null = null;
    const follow = (leading: boolean) => {
      this.#leading = leading;
      if (leading && !this.#stopped) {
        unlisten ??= fleet.listen(FLEET_CHANNELS.staged, () => this.wake());
        this.#running ??= this.#loop();
      } else {
        unlisten?.();
        unlisten = null;
        this.wake();
      }
    };
    this.#unsubscribe.push(campaign ? fleet.onLeader(follow) : fleet.watchLeader(follow), () =>
      unlisten?.(),
    );
  }

  /** Integrate now rather than at the next look (a no-op when not leading). */
  wake(): void {
    this.#woken = true;
    this.#wake?.();
  }

  /** Stops integrating here; resolves once a step under way has ended. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const u of this.#unsubscribe.splice(0)) u();
    this.wake();
    await this.#running;
  }

  async #loop(): Promise<void> {
    try {
      while (this.leading) {
        this.#woken = false;
        let done: Integrated | null = null;
        try {
          done = await this.#integrate();
        } catch (err) {
          this.#options.onError?.(err);
        }
        if (done && done.count > 0) {
          // From the oldest record's staging to this integration's commit: what it waited.
          const waited = Math.max(0, Date.now() - (done.oldestStagedAt ?? Date.now()));
          this.#options.onIntegrated?.(done.count, waited);
          if (waited > this.maxDelayMs) this.#options.onLate?.(waited);
        }
        // Records came (or more are left, or more were staged meanwhile): go on at once, taking
        // whatever was staged during this step; else wait for a wake or the next look.
        if (done?.more || this.#woken || (done !== null && done.count > 0)) continue;
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
          setTimeout(resolve, done === null ? this.#pollMs * 4 : this.#pollMs).unref();
        });
        this.#wake = null;
      }
    } finally {
      this.#running = null;
      // Leadership came back while this loop was ending: run again.
      if (this.leading) this.#running = this.#loop();
    }
  }
}
