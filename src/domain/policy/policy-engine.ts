/**
 * @module The org policy engine as the gate sees it (Cedar is the one implementation), and where
 * the gate gets it from. The gate builds the request; the engine only answers it.
 */
import type { CedarDecision, CedarRequest } from './cedar/index.js';

/** An org policy engine (Cedar); the gate builds its request. */
export interface PolicyEngine {
  appliesTo(tool: { id: string; action_class: string; tags: readonly string[] }): boolean;
  evaluate(request: CedarRequest): CedarDecision;
  /** False when no policy reads the session's counters; absent means it may. */
  readonly readsSessionCounters?: boolean;
}

/** Where the gate gets its policy engine: fixed (library use) or loaded from stored policies. */
export type PolicySupplier = () => Promise<PolicyEngine | null>;
