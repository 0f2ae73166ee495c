/**
 * @module SQLite's fleet slot (Store.fleet, docs/architecture.md §5): one process serves the file,
 * so it always leads and nothing is announced; readers keep polling (the CLI beside a gateway
 * changes the file too, and is seen within the polling interval).
 */
import type { Fleet, FleetNotify } from '../fleet.js';

export function singleProcessFleet(): Fleet {
  return {
    shared: false,
    listen: () => () => {},
    listening: false,
    onListening: () => () => {},
    leader: true,
    onLeader(fn) {
      fn(true);
      return () => {};
    },
    watchLeader(fn) {
      fn(true);
      return () => {};
    },
    decided: async () => {},
    close: async () => {},
  };
}

export const notify: FleetNotify = async () => {};
