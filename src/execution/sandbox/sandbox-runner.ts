/**
 * @module The extension point every isolation driver implements (docs/architecture.md §4); one
 * conformance suite (test/sandbox/conformance.case.ts) runs against each.
 */
import type { Readable, Writable } from 'node:stream';
import type { RunOutcome } from './run-outcome.js';
import type { DriverName, LongLivedSpec, RunSpec } from './run-spec.js';

/** Whether a driver works on this host, found by really running `true` in it once. */
export interface DriverProbe {
  readonly driver: DriverName;
  readonly available: boolean;
  /** What was found, or why it fails. */
  readonly detail: string;
  /** What to install or fix when it does not work. */
  readonly install: string;
  /** Properties that hold on this host, e.g. a noexec scratch. */
  readonly notes: readonly string[];
}

/** A process kept running inside a sandbox with its stdio open (an MCP stdio server). */
export interface SandboxProcess {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Settles when the process has ended and the sandbox is torn down (never rejects). */
  readonly exited: Promise<RunOutcome>;
  /** Kills the whole sandbox and waits for the teardown. */
  close(): Promise<RunOutcome>;
}

export interface SandboxRunner {
  readonly name: DriverName;
  /** Probed once and cached; never throws. */
  probe(): Promise<DriverProbe>;
  /** Runs to completion under the spec's limits; never throws (failures are outcomes). */
  run(spec: RunSpec): Promise<RunOutcome>;
  /** Starts a long-lived process; rejects when the driver is unavailable or the spawn fails. */
  start(spec: LongLivedSpec): Promise<SandboxProcess>;
}
