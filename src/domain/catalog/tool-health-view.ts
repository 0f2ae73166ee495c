/**
 * @module What discovery reads of a tool's health (C14), as a port: the health monitor fills it
 * in, discovery only ranks and marks by it. Until a monitor is wired in, every tool is
 * `unchecked` with score 0 (docs/architecture.md §6, "Discovery for agents").
 */

export type HealthState = 'unchecked' | 'healthy' | 'degraded' | 'unavailable';

/** One version's health now. `score` is in [0, 1] (1: every probe and call met its SLA). */
export interface ToolHealthView {
  readonly state: HealthState;
  readonly score: number;
}

/** Any object of this shape may be handed to discovery; it must answer quickly and never throw. */
export interface HealthReader {
  healthOf(toolId: string, version: string): ToolHealthView;
}

/** Why the gate refuses a call to a tool that is unavailable (code TOOL_UNAVAILABLE). */
export interface HealthRefusal {
  readonly rule: 'health.circuit_open' | 'health.override';
  readonly message: string;
}

/**
 * What the gate needs of the health monitor, both synchronous and O(1): `admit` before a call runs
 * (null: go on), `observe` once it ran (passive health). Neither ever throws or awaits. `caller`
 * is the calling principal (agent and user, as the gate keys it): one caller's outcomes alone
 * never move what all share. A port of the domain, so the gate never imports operations/.
 */
export interface HealthGate {
  admit(toolId: string, version: string, caller: string): HealthRefusal | null;
  observe(toolId: string, version: string, ok: boolean, durationMs: number, caller: string): void;
}

const UNCHECKED: ToolHealthView = Object.freeze({ state: 'unchecked', score: 0 });

/** The reader used when no monitor is wired in: nothing has been checked yet. */
export const UNCHECKED_HEALTH: HealthReader = Object.freeze({
  healthOf: (): ToolHealthView => UNCHECKED,
});
