/** @module The escape suite against every real driver (the process driver where it applies). */
import { DRIVERS } from './drivers.js';
import { escapeSuite } from './escape.case.js';

const HOST_FS = 'the process driver shares the host filesystem; only pure tools may use it';

for (const runner of DRIVERS) {
  escapeSuite(
    runner,
    runner.name === 'process'
      ? {
          "cannot see the gateway's data dir, database or master key": HOST_FS,
          '/dev holds only the expected device nodes and is read-only': `${HOST_FS} (its /dev is the host's)`,
        }
      : runner.name === 'gvisor'
        ? {
            'a program may use /dev/shm within the scratch cap, and the next run finds it empty':
              "gVisor's /dev/shm is its sentry's own folder, not writable by the tool: shm use fails (EACCES)",
            'a System V shared memory segment made in a run goes with it; the host never holds it (attack round 18, U3)':
              "gVisor's own kernel holds System V objects, and its ipcs lists none: nothing reaches the host to look for",
          }
        : {},
  );
}
