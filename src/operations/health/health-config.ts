/**
 * @module The health monitor's configuration (C14) as data, checked before anything starts:
 * probe intervals by access tier (seed defaults: 60 s restricted and privileged, 10 min public),
 * the breaker, the score thresholds and the scheduler's bounds.
 */

import { type Problem, problem, ToolgateError } from '../../core/index.js';
import type { AccessTier } from '../../domain/catalog/index.js';

export interface HealthConfig {
  /** Probe interval per access tier, in ms. */
  readonly intervalMs: Readonly<Record<AccessTier, number>>;
  /** Probes in flight at most (over every tool): the scheduler never runs more. */
  readonly maxConcurrentProbes: number;
  /** A probe that takes longer fails (`probe.timeout`). */
  readonly probeTimeoutMs: number;
  /** After a failed probe, the next comes this soon (confirming a failure without a whole interval). */
  readonly confirmAfterMs: number;
  /** Consecutive failures (probes or calls) that open a tool's breaker. */
  readonly breakerFailures: number;
  /**
   * Distinct callers (agent and user) whose failed calls it takes to open a tool's breaker, or to
   * lower its score, when no probe failed: one caller alone never takes a tool away from others.
   */
  readonly breakerCallers: number;
  /** How long an open breaker waits before it half-opens to test. */
  readonly breakerOpenMs: number;
  /** Score at or above which a checked tool is healthy; below it, degraded. */
  readonly healthyAtScore: number;
  /** Latency target of a tool without an SLA. */
  readonly defaultTargetLatencyMs: number;
  /** How often the scheduler looks for due probes. */
  readonly tickMs: number;
  /** How often coverage is computed (and alerted on). */
  readonly coverageEveryMs: number;
  /** A probe later than its interval by more than this is overdue (coverage, the alert). */
  readonly coverageGraceMs: number;
  /** How often the catalog revision is read, for changes made by other replicas. */
  readonly syncEveryMs: number;
  /** Longest admin override. */
  readonly maxOverrideMs: number;
}

export const DEFAULT_HEALTH_CONFIG: HealthConfig = Object.freeze({
  intervalMs: Object.freeze({ public: 600_000, restricted: 60_000, privileged: 60_000 }),
  maxConcurrentProbes: 16,
  probeTimeoutMs: 10_000,
  confirmAfterMs: 1_000,
  breakerFailures: 3,
  breakerCallers: 2,
  breakerOpenMs: 30_000,
  healthyAtScore: 0.8,
  defaultTargetLatencyMs: 1_000,
  tickMs: 100,
  coverageEveryMs: 5_000,
  coverageGraceMs: 5_000,
  syncEveryMs: 2_000,
  maxOverrideMs: 30 * 86_400_000,
});

export type HealthConfigInput = Partial<Omit<HealthConfig, 'intervalMs'>> & {
  readonly intervalMs?: Partial<Record<AccessTier, number>>;
};

/** Fills defaults and checks every number; a bad configuration is INPUT_INVALID, nothing starts. */
export function resolveHealthConfig(input: HealthConfigInput = {}): HealthConfig {
  const config: HealthConfig = {
    ...DEFAULT_HEALTH_CONFIG,
    ...input,
    intervalMs: { ...DEFAULT_HEALTH_CONFIG.intervalMs, ...(input.intervalMs ?? {}) },
  };
  const problems: Problem[] = [];
  const positive = (pointer: string, value: number) => {
    if (!Number.isInteger(value) || value < 1)
      problems.push(problem(pointer, 'must be a positive integer', 'range'));
  };
  for (const [tier, ms] of Object.entries(config.intervalMs))
    positive(`/health/intervalMs/${tier}`, ms);
  for (const key of [
    'maxConcurrentProbes',
    'probeTimeoutMs',
    'confirmAfterMs',
    'breakerFailures',
    'breakerCallers',
    'breakerOpenMs',
    'defaultTargetLatencyMs',
    'tickMs',
    'coverageEveryMs',
    'coverageGraceMs',
    'syncEveryMs',
    'maxOverrideMs',
  ] as const)
    positive(`/health/${key}`, config[key]);
  if (!(config.healthyAtScore > 0 && config.healthyAtScore <= 1))
    problems.push(problem('/health/healthyAtScore', 'must be in (0, 1]', 'range'));
  if (problems.length > 0)
    throw new ToolgateError('INPUT_INVALID', 'the health configuration is invalid', { problems });
  return config;
}

/** An integer variable within bounds, or undefined when unset; a bad value stops the start. */
function intFromEnv(
  env: NodeJS.ProcessEnv,
  name: string,
  min: number,
  max: number,
): number | undefined {
  const text = env[name]?.trim();
  if (!text) return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min || n > max) {
    throw new ToolgateError(
      'INPUT_INVALID',
      `${name} must be an integer ${min}–${max}, got ${text}`,
      {
        problems: [],
      },
    );
  }
  return n;
}

/**
 * Tool health probing from TOOLGATE_HEALTH (`off` turns it off) and TOOLGATE_HEALTH_* (intervals
 * by access tier in seconds, probe timeout, concurrency); unset ones keep their defaults.
 */
export function healthConfigFromEnv(env: NodeJS.ProcessEnv): HealthConfigInput | false {
  const switched = env.TOOLGATE_HEALTH?.trim();
  if (switched !== undefined && switched !== '' && switched !== 'on' && switched !== 'off') {
    throw new ToolgateError('INPUT_INVALID', `TOOLGATE_HEALTH must be on or off, got ${switched}`, {
      problems: [],
    });
  }
  if (switched === 'off') return false;
  const seconds = (tier: string) =>
    intFromEnv(env, `TOOLGATE_HEALTH_INTERVAL_${tier.toUpperCase()}`, 5, 86_400);
  const intervalMs: Partial<Record<AccessTier, number>> = {};
  for (const tier of ['public', 'restricted', 'privileged'] as const) {
    const s = seconds(tier);
    if (s !== undefined) intervalMs[tier] = s * 1000;
  }
  const probeTimeoutMs = intFromEnv(env, 'TOOLGATE_HEALTH_PROBE_TIMEOUT_MS', 100, 600_000);
  const maxConcurrentProbes = intFromEnv(env, 'TOOLGATE_HEALTH_MAX_CONCURRENT_PROBES', 1, 1_000);
  return {
    ...(Object.keys(intervalMs).length > 0 ? { intervalMs } : {}),
    ...(probeTimeoutMs !== undefined ? { probeTimeoutMs } : {}),
    ...(maxConcurrentProbes !== undefined ? { maxConcurrentProbes } : {}),
  };
}
