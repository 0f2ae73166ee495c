/**
 * @module The rlimits of a run as a fixed prlimit(1) argv (util-linux): numbers from the tool
 * definition only, never anything a caller supplied.
 */
import type { SandboxLimits } from '../../domain/catalog/index.js';

const MIB = 1024 * 1024;

/** `prlimit … --` to put before the program's argv. */
export function prlimitArgv(limits: SandboxLimits, prlimitPath = 'prlimit'): string[] {
  const cpuSeconds = Math.max(1, Math.ceil(limits.cpu_ms / 1000));
  return [
    prlimitPath,
    // Soft limit sends SIGXCPU (a distinct outcome); the hard limit one second later kills.
    `--cpu=${cpuSeconds}:${cpuSeconds + 1}`,
    `--data=${limits.memory_mb * MIB}`,
    `--nproc=${limits.processes}`,
    `--nofile=${limits.open_files}`,
    // No single file larger than the scratch space; no core dumps of tool memory.
    `--fsize=${limits.scratch_mb * MIB}`,
    '--core=0',
    '--',
  ];
}
