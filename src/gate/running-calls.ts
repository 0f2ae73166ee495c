/**
 * @module The calls of one gate whose tool is running now (the `execute` step), so that a gateway
 * stopping with tools still running (docs/operations.md "Stopping": the shutdown deadline passed)
 * records how each of those calls ended as far as it knows: an `interrupted` post record, written
 * once, after which `audit-post` writes none of its own. From the stop on, no tool starts. A call
 * whose tool had just finished goes on to its own post record. Costs a Map entry per running call.
 */

/** One gate's running calls, each with the record its interruption writes. */
export class RunningCalls {
  readonly #running = new Map<object, () => Promise<unknown>>();
  /** Calls the stop wrote the post record of. */
  readonly #cut = new WeakSet<object>();
  #stopped = false;

  /** True once the gateway is stopping: the `execute` step runs nothing more. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** The call's tool starts now; `interrupt` writes its record if the gateway stops first. */
  enter(call: object, interrupt: () => Promise<unknown>): void {
    this.#running.set(call, interrupt);
  }

  /** The call's tool has ended (or failed to start). */
  leave(call: object): void {
    this.#running.delete(call);
  }

  /** True when the stop wrote the call's post record: `audit-post` writes none. */
  wasCut(call: object): boolean {
    return this.#cut.has(call);
  }

  /**
   * Stops: no tool starts from now on, and each call still running gets its interrupted record
   * (awaited: committed with the log's last group). Returns how many. Never throws: a record that
   * cannot be written leaves its call as a crash would (its pre record alone).
   */
  async stop(): Promise<number> {
    this.#stopped = true;
    const cut = [...this.#running];
    this.#running.clear();
    for (const [call] of cut) this.#cut.add(call);
    await Promise.all(cut.map(([, interrupt]) => interrupt().catch(() => {})));
    return cut.length;
  }
}

const GATES = new WeakMap<object, RunningCalls>();

/** The running calls of the gate whose step dependencies are `deps` (one per gate). */
export function runningOf(deps: object): RunningCalls {
  let running = GATES.get(deps);
  if (!running) {
    running = new RunningCalls();
    GATES.set(deps, running);
  }
  return running;
}
