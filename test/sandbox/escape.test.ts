/** @module The escape suite against every real driver (the process driver where it applies). */
import { DRIVERS } from './drivers.js';
import { escapeSuite } from './escape.case.js';

const HOST_FS = 'the process driver shares the host filesystem; only pure tools may use it';
const HOST_DEV = `${HOST_FS} (its /dev and /dev/shm are the host's)`;

for (const runner of DRIVERS) {
  escapeSuite(
    runner,
    runner.name === 'process'
      ? {
          "cannot see the gateway's data dir, database or master key": HOST_FS,
          'cannot execute a file it wrote to scratch (noexec)': `${HOST_FS} (its scratch is a host directory)`,
          'filling scratch with many files ends with scratch_full':
            'the process driver has no scratch quota, only a per-file cap (RLIMIT_FSIZE)',
          '/dev holds only the expected device nodes and is read-only': HOST_DEV,
          '/dev/shm takes no more than the scratch cap, shared with /tmp': HOST_DEV,
          'cannot run a program copied to /dev/shm (noexec)': HOST_DEV,
          'a program may use /dev/shm within the scratch cap, and the next run finds it empty':
            HOST_DEV,
        }
      : runner.name === 'gvisor'
        ? {
            'a program may use /dev/shm within the scratch cap, and the next run finds it empty':
              "gVisor's /dev/shm is its sentry's own folder, not writable by the tool: shm use fails (EACCES)",
          }
        : {},
  );
}
