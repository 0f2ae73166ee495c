/**
 * @module The admin API's `sweep` (housekeeping of a running gateway, serve runs it on a timer):
 * the gate's expired counters and idempotency keys, the classified store's raw arguments past
 * their retention, and the approvals of runs that ended, in that order.
 */
import type { Clock } from '../core/index.js';
import { withdrawEndedRunApprovals } from '../domain/sessions/index.js';
import type { Gate } from '../gate/index.js';
import type { ClassifiedArguments } from '../records/audit/index.js';
import type { Store } from '../records/store/index.js';
import type { AdminApi } from './admin-api.js';

export function adminSweep(parts: {
  readonly gate: Pick<Gate, 'sweep'>;
  readonly classified: Pick<ClassifiedArguments, 'sweep'>;
  readonly store: Pick<Store, 'db'>;
  readonly clock: Clock;
}): AdminApi['sweep'] {
  const { gate, classified, store, clock } = parts;
  return async () => ({
    ...(await gate.sweep()),
    classifiedArguments: await classified.sweep(),
    withdrawnApprovals: await withdrawEndedRunApprovals(store.db, clock()),
  });
}
