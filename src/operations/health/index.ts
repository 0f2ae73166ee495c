/**
 * @module The health monitor (C14, docs/architecture.md §8): probes, scores, circuit breakers,
 * overrides and probe coverage of every offered tool version. Anything exported here is public
 * API; the gate reads it through `HealthGate`, discovery and sessions through `HealthReader`.
 */
export type { HealthConfig, HealthConfigInput } from './health-config.js';
export {
  DEFAULT_HEALTH_CONFIG,
  healthConfigFromEnv,
  resolveHealthConfig,
} from './health-config.js';
export type {
  HealthMonitorDependencies,
  OverrideInput,
  ToolHealthStatus,
} from './health-monitor.js';
export { HealthMonitor } from './health-monitor.js';
export type { HealthOverride, OverrideState } from './health-overrides.js';
export { OVERRIDE_STATES } from './health-overrides.js';
export type {
  BreakerState,
  CodeHashMismatch,
  CoverageAlert,
  HealthCause,
  HealthChange,
  HealthEvent,
  HealthGate,
  HealthReader,
  HealthRefusal,
  HealthState,
  ToolHealthView,
} from './health-state.js';
export { HEALTH_STATES } from './health-state.js';
export type { ProbeKind, ProbeOutcome, Prober, ToolProberDependencies } from './tool-prober.js';
export { PROBE_AGENT, ToolProber } from './tool-prober.js';
