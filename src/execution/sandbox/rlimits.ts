/**
 * @module The rlimits of a run as a fixed prlimit(1) argv (util-linux): numbers from the tool
 * definition only, never anything a caller supplied.
 */
import type { SandboxLimits } from '../../domain/catalog/index.js';
import { cgroupHost } from './memory-cgroup.js';

const MIB = 1024 * 1024;

/**
 * What RLIMIT_DATA allows beyond the tool's memory: address space a modern runtime reserves at
 * start and does not use (Node 24's V8 reserves a 512 MB code range and will not start under
 * less). The tool's memory itself is held to `memory_mb` by the host's watch of its resident
 * memory (launch.ts, `watch`); this bound only keeps one sudden allocation from running far past
 * it between two looks.
 */
export const DATA_RESERVE_MB = 1024;

/**
 * RLIMIT_DATA of a run in bytes, or null (unlimited) where a cgroup per run holds its memory
 * (memory-cgroup.ts): the kernel then charges what the tool uses, and an address-space limit would
 * only refuse runtimes that reserve more than they use.
 */
export function dataLimitBytes(limits: SandboxLimits): number | null {
  return cgroupHost().version === null ? (limits.memory_mb + DATA_RESERVE_MB) * MIB : null;
}

/** `prlimit … --` to put before the program's argv. */
export function prlimitArgv(limits: SandboxLimits, prlimitPath = 'prlimit'): string[] {
  const cpuSeconds = Math.max(1, Math.ceil(limits.cpu_ms / 1000));
  return [
    prlimitPath,
    // Soft limit sends SIGXCPU (a distinct outcome); the hard limit one second later kills.
    `--cpu=${cpuSeconds}:${cpuSeconds + 1}`,
    `--data=${dataLimitBytes(limits) ?? 'unlimited'}`,
    `--nproc=${limits.processes}`,
    `--nofile=${limits.open_files}`,
    // No single file larger than the scratch space; no core dumps of tool memory.
    `--fsize=${limits.scratch_mb * MIB}`,
    '--core=0',
    '--',
  ];
}
