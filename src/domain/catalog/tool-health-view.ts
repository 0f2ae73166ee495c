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

const UNCHECKED: ToolHealthView = Object.freeze({ state: 'unchecked', score: 0 });

/** The reader used when no monitor is wired in: nothing has been checked yet. */
export const UNCHECKED_HEALTH: HealthReader = Object.freeze({
  healthOf: (): ToolHealthView => UNCHECKED,
});
