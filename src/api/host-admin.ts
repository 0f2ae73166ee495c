/**
 * @module Admin services that need no open gateway: which sandbox drivers work on this host, a
 * command tool's code hash, and whether an error opening the database means it is damaged. The
 * CLI's `doctor`, `tools hash` and `audit verify` use these, so no front imports sandbox/ or
 * store/ (docs/architecture.md §6).
 */
import { codeFiles, commandCodeHash, SandboxService } from '../sandbox/index.js';
import { isStoreCorrupt, isStoreUnavailable } from '../store/index.js';

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

/**
 * Whether an error raised while opening or reading the database says its files are damaged (as
 * opposed to unreachable): `audit verify` reports that as a finding, not as a refusal.
 */
export function storeIsCorrupt(err: unknown): boolean {
  return isStoreCorrupt(err);
}

/**
 * Whether a driver error means the database cannot be reached (the fronts answer 503
 * STORE_UNAVAILABLE). Fronts ask here, never store/; once the store translates driver errors at
 * its edge into STORE_UNAVAILABLE, the fronts' code check alone suffices and this goes.
 */
export function storeIsUnavailable(err: unknown): boolean {
  return isStoreUnavailable(err);
}
