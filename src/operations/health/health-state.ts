/**
 * @module What the health monitor (C14) tells the rest of toolgate: a tool version's state and
 * score, the hot-path check the gate asks before it runs a call, and the change events others
 * subscribe to (docs/architecture.md §8, C14). Types only.
 */

/** `unchecked`: nothing is known yet (no probe and no call finished); score 0. */
export type HealthState = 'unchecked' | 'healthy' | 'degraded' | 'unavailable';

export const HEALTH_STATES: readonly HealthState[] = Object.freeze([
  'unchecked',
  'healthy',
  'degraded',
  'unavailable',
]);

/** A tool version's health as ranked and routed on: score 0..1, 0 while unchecked. */
export interface ToolHealthView {
  readonly state: HealthState;
  readonly score: number;
}

/** Read side for discovery and sessions: answered from memory, never a database round trip. */
export interface HealthReader {
  healthOf(toolId: string, version: string): ToolHealthView;
}

/** Why the gate refuses a call to a tool that is unavailable (code TOOL_UNAVAILABLE). */
export interface HealthRefusal {
  readonly rule: 'health.circuit_open' | 'health.override';
  readonly message: string;
}

/**
 * What the gate needs of the monitor, both synchronous and O(1): `admit` before a call runs
 * (null: go on), `observe` once it ran (passive health). Neither ever throws or awaits. `caller`
 * is the calling principal (agent and user, as the gate keys it): one caller's outcomes alone never move what all share.
 */
export interface HealthGate {
  admit(toolId: string, version: string, caller: string): HealthRefusal | null;
  observe(toolId: string, version: string, ok: boolean, durationMs: number, caller: string): void;
}

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
