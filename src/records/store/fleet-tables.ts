/**
 * @module The fleet's tables (migration `0044_fleet_state`, docs/architecture.md §5, "Replicas
 * that agree"): the elected prober's latest outcomes, which every replica applies, and the owner
 * notices sent, which the per-team cap counts across replicas.
 */

/** The latest probe of a tool version by the fleet's prober (migration 0044). */
export interface ToolProbeOutcomeTable {
  tool_id: string;
  version: string;
  probed_at: string;
  /** 1 for a good probe, 0 for a failed one. */
  ok: number;
  latency_ms: number;
  rule: string | null;
}

/** One owner notice sent to a team (migration 0044): the per-team cap counts these. */
export interface OwnerNoticeSendTable {
  team: string;
  sent_at: string;
}
