/** @module The escape suite against every real driver (the process driver where it applies). */
import { DRIVERS } from './drivers.js';
import { escapeSuite } from './escape.case.js';

const HOST_NETWORK = 'the process driver shares the host network; only pure tools may use it';
const HOST_FS = 'the process driver shares the host filesystem; only pure tools may use it';

for (const runner of DRIVERS) {
  escapeSuite(
    runner,
    runner.name === 'process'
      ? {
          'cannot reach the cloud metadata address 169.254.169.254': HOST_NETWORK,
          'cannot reach an outside host directly': HOST_NETWORK,
          'cannot resolve a host name': HOST_NETWORK,
          "cannot connect to a toolgate port on the host's 127.0.0.1": HOST_NETWORK,
          "cannot see the gateway's data dir, database or master key": HOST_FS,
          'cannot execute a file it wrote to scratch (noexec)': `${HOST_FS} (its scratch is a host directory)`,
          'filling scratch with many files ends with scratch_full':
            'the process driver has no scratch quota, only a per-file cap (RLIMIT_FSIZE)',
          'a background process in a new session does not outlive the run':
            'a setsid child leaves the process group; only namespace and gvisor contain it',
        }
      : {},
  );
}
