/**
 * @module What the health monitor (C14) tells the rest of toolgate: a tool version's state and
 * score, the hot-path check the gate asks before it runs a call, and the change events others
 * subscribe to (docs/architecture.md §8, C14). Types only.
 */

import type { HealthState } from '../../domain/catalog/index.js';

// The read side (HealthReader) and the gate's hot-path check (HealthGate) are ports the domain
// owns; the monitor implements them (docs/architecture.md §2).
export type {
  HealthGate,
  HealthReader,
  HealthRefusal,
  HealthState,
  ToolHealthView,
} from '../../domain/catalog/index.js';

export const HEALTH_STATES: readonly HealthState[] = Object.freeze([
  'unchecked',
  'healthy',
  'degraded',
  'unavailable',
]);

/** The circuit breaker of one tool version. */
export type BreakerState = 'closed' | 'open' | 'half_open';

/** What moved a tool's health. */
export type HealthCause = 'probe' | 'call' | 'override' | 'override_expired' | 'breaker';

/** A tool version's state changed: told to subscribers, audited, counted. */
export interface HealthChange {
  readonly kind: 'health_changed';
  readonly toolId: string;
  readonly version: string;
  readonly owner: string;
  readonly from: HealthState;
  readonly to: HealthState;
  readonly score: number;
  readonly cause: HealthCause;
  /** The last failure's rule, when one moved it (e.g. `http.upstream`, `probe.code_hash_mismatch`). */
  readonly rule: string | null;
  readonly at: string;
}

/** A probe found that the code on disk is not the code registered (seed §8): quarantined. */
export interface CodeHashMismatch {
  readonly kind: 'code_hash_mismatch';
  readonly toolId: string;
  readonly version: string;
  readonly owner: string;
  readonly expected: string;
  readonly actual: string;
  readonly at: string;
}

/** Some tools went unprobed past their interval (probe coverage SLO), or coverage came back. */
export interface CoverageAlert {
  readonly kind: 'coverage_alert' | 'coverage_restored';
  readonly probed: number;
  readonly overdue: number;
  /** A few of the overdue tools (ids@versions), never all of them. */
  readonly sample: readonly string[];
  readonly at: string;
}

export type HealthEvent = HealthChange | CodeHashMismatch | CoverageAlert;
