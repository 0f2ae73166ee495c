/**
 * @module Admin services that need no open gateway: which sandbox drivers work on this host and a
 * command tool's code hash. The CLI's `doctor` and `tools hash` use these, so no front imports
 * sandbox/ (docs/architecture.md §6). (Whether the database is damaged is a typed error from the
 * store's edge, `isStoreCorrupt` in core/.)
 */
import {
  codeFiles,
  commandCodeHash,
  DRIVER_NAMES,
  SandboxService,
} from '../execution/sandbox/index.js';

/** The sandbox drivers' names, for `doctor --sandbox` (the one a deployment relies on). */
export const SANDBOX_DRIVERS: readonly string[] = DRIVER_NAMES;

export type DriverReport = Awaited<ReturnType<SandboxService['doctor']>>[number];

/** Every sandbox driver's probe on this host (each runs `true` once). */
export function hostDoctor(
  sandbox: Pick<SandboxService, 'doctor'> = new SandboxService(),
): Promise<DriverReport[]> {
  return sandbox.doctor();
}

/** The `code_hash` a `command` tool's argv pins, and the files it covers (absolute paths). */
export function codeHash(argv: readonly string[]): { code_hash: string; files: string[] } {
  const files = codeFiles(argv);
  return { code_hash: commandCodeHash(argv), files };
}
