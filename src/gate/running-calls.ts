/**
 * @module The calls between their `execute` and `audit-post` steps, so that a gateway stopping
 * with calls still running (docs/operations.md "Stopping": the shutdown deadline passed) records
 * how each of them ended as far as it knows: an `interrupted` post record, written once, after
 * which the call's own post record is not written. Every pre record thus gets its post record,
 * and a call that starts once the gateway stops does not run. Costs a Map entry per running call.
 */

/** What the gate stops: it writes the interrupted record of a call still running. */
export type Interrupt<T> = (call: T) => Promise<void>;

export class RunningCalls<T extends object> {
  readonly #running = new Set<T>();
  /** Calls the stop wrote the post record of. */
  readonly #cut = new WeakSet<T>();
  #stopped = false;

  /** True once the gateway is stopping: the `execute` step runs nothing more. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** The call's tool starts now. */
  enter(call: T): void {
    this.#running.add(call);
  }

  /**
   * The call's run has ended (or its pipeline failed): true when its own post record is still
   * to be written, false when the stop already wrote one for it.
   */
  leave(call: T): boolean {
    this.#running.delete(call);
    return !this.#cut.has(call);
  }

  /**
   * Stops: no call starts from now on, and each one still running gets its interrupted record
   * (awaited, so that it is committed with the log's last group). Returns how many. Never throws:
   * a record that cannot be written leaves its call as a crash would (a pre record alone).
   */
  async stop(interrupt: Interrupt<T>): Promise<number> {
    this.#stopped = true;
    const cut = [...this.#running];
    this.#running.clear();
    for (const call of cut) this.#cut.add(call);
    await Promise.all(cut.map((call) => interrupt(call).catch(() => {})));
    return cut.length;
  }
}
