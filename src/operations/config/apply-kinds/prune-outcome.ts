/** @module What pruning one object did (prune.ts): its summary, or kept with the reason. */

export interface PruneOutcome {
  /** For people: what was done, or why nothing was. */
  readonly summary: string;
  /**
   * The object stays (a rule forbids removing it now): the plan lists it as drift with the
   * reason, and it stays in the set's ledger so every later apply says so again.
   */
  readonly kept?: true;
}
