/**
 * @module How a sandboxed run ended: a discriminated union with one distinct kind per way it can
 * end, so audit records and gate decisions can tell a timeout from a memory bomb.
 */
import type { MemoryEnforcement } from './memory-cgroup.js';
import type { DriverName } from './run-spec.js';

export const OUTCOME_KINDS = [
  'ok',
  'exit_nonzero',
  'timeout',
  'cpu_limit',
  'memory_limit',
  'output_limit',
  'scratch_full',
  'spawn_failed',
  'driver_unavailable',
] as const;
export type OutcomeKind = (typeof OUTCOME_KINDS)[number];

/** What every outcome carries; stdout and stderr are capped and marked when cut. */
export interface RunRecord {
  readonly driver: DriverName;
  readonly stdout: string;
  readonly stderr: string;
  readonly stdoutTruncated: boolean;
  readonly stderrTruncated: boolean;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly durationMs: number;
  /** How memory was held (absent: the run never started) and, with a cgroup, the most it held. */
  readonly memory?: MemoryReport;
}

export interface MemoryReport {
  readonly enforcement: MemoryEnforcement;
  /** The run cgroup's peak in MB; null without a cgroup. */
  readonly peakMb: number | null;
}

export type RunOutcome =
  | (RunRecord & { readonly kind: 'ok' })
  | (RunRecord & { readonly kind: 'exit_nonzero' })
  | (RunRecord & { readonly kind: 'timeout'; readonly limitMs: number })
  | (RunRecord & { readonly kind: 'cpu_limit'; readonly limitMs: number })
  | (RunRecord & { readonly kind: 'memory_limit'; readonly limitMb: number })
  | (RunRecord & { readonly kind: 'output_limit'; readonly limitBytes: number })
  | (RunRecord & { readonly kind: 'scratch_full'; readonly limitMb: number })
  | (RunRecord & { readonly kind: 'spawn_failed'; readonly reason: string })
  | (RunRecord & {
      readonly kind: 'driver_unavailable';
      readonly reason: string;
      /** What to install or fix on the host to make the driver work. */
      readonly install: string;
    });

/** Appended to a stream that was cut at its cap. */
export const TRUNCATION_MARK = '\n[toolgate: output truncated]';

export function emptyRecord(driver: DriverName): RunRecord {
  return {
    driver,
    stdout: '',
    stderr: '',
    stdoutTruncated: false,
    stderrTruncated: false,
    exitCode: null,
    signal: null,
    durationMs: 0,
  };
}

export function driverUnavailable(driver: DriverName, reason: string, install: string): RunOutcome {
  return { ...emptyRecord(driver), kind: 'driver_unavailable', reason, install };
}
