/**
 * @module Sandboxed execution (C9): the runner interface, its process, namespace
 * (bubblewrap) and gvisor (runsc) drivers, the `command` runtime and long-lived processes.
 * Anything exported here is public API.
 */

export { codeFiles, commandCodeHash } from './code-hash.js';
export type { CommandPlan, CommandResult, SandboxDenyCode } from './command-runtime.js';
export { interpretRun, pathRootBinds, planCommand, toolFileBinds } from './command-runtime.js';
export * from './egress/index.js';
export { GvisorRunner } from './gvisor/gvisor-runner.js';
export type { CgroupHost, MemoryEnforcement } from './memory-cgroup.js';
export {
  CGROUP_ENV,
  cgroupHost,
  findCgroupHost,
  memoryEnforcement,
  RunCgroup,
} from './memory-cgroup.js';
export { NamespaceRunner } from './namespace/namespace-runner.js';
export { ProcessRunner } from './process/process-runner.js';
export { uidRangeFromEnv } from './process/run-uid-pool.js';
export {
  definitionPathProblems,
  ProtectedPaths,
  pathInside,
  providerPathProblems,
  realPath,
} from './protected-paths.js';
export { DATA_RESERVE_MB, dataLimitBytes } from './rlimits.js';
export type { MemoryReport, OutcomeKind, RunOutcome, RunRecord } from './run-outcome.js';
export { OUTCOME_KINDS, TRUNCATION_MARK } from './run-outcome.js';
export type { DriverName, LongLivedSpec, ReadOnlyBind, RunSpec } from './run-spec.js';
export { DRIVER_NAMES, EGRESS_PROXY_URL, EGRESS_SOCKET_PATH } from './run-spec.js';
export type { DriverProbe, SandboxProcess, SandboxRunner } from './sandbox-runner.js';
export type { CommandRunOptions } from './sandbox-service.js';
export { SandboxService } from './sandbox-service.js';
