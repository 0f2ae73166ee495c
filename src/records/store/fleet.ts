/**
 * @module What replicas on one database tell each other, and which one of them does the work that
 * must run once for the whole fleet (docs/architecture.md §5, "Replicas that agree"): the slot
 * `Store.fleet` fills per dialect. PostgreSQL (postgres/fleet.ts): notifications through
 * `LISTEN/NOTIFY` on one dedicated connection per process, and a leader elected by a
 * session-level advisory lock that connection holds (released by the server when the connection
 * ends, so a replica that dies hands over). SQLite (sqlite/fleet.ts): one process serves the
 * file, so it always leads and hears nothing; its readers keep polling.
 *
 * A notification is sent from the transaction that made the change (`notifyIn`), so it is
 * delivered only if that transaction commits, and after it. It is a hint: a listener re-reads the
 * state it names, never trusts a payload for anything it decides.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './database.js';

/** The channels, one per kind of change; fixed names (they are SQL identifiers). */
export const FLEET_CHANNELS = {
  /** The catalog or identity revision moved (events.ts's bumps). */
  revisions: 'toolgate_revisions',
  /** The elected prober recorded a probe's outcome (operations/health). */
  probes: 'toolgate_probes',
  /** A replica staged audit records while the sequencer may be idle (postgres/audit-sequencer.ts). */
  staged: 'toolgate_audit_staged',
} as const;

export type FleetChannel = (typeof FLEET_CHANNELS)[keyof typeof FLEET_CHANNELS];

export interface Fleet {
  /**
   * Whether other processes may serve this database beside this one (PostgreSQL). When true,
   * work that must run once for all of them runs on the leader only; when false (SQLite) this
   * process does it all, as it always did.
   */
  readonly shared: boolean;
  /**
   * Calls `onMessage` with each notification on `channel` from any process (this one included).
   * Starts the dedicated connection on first use. Returns the unsubscribe.
   */
  listen(channel: FleetChannel, onMessage: (payload: string) => void): () => void;
  /**
   * Whether notifications are being delivered now. While false (never on SQLite; on PostgreSQL
   * while the dedicated connection is down) a reader polls what it watches.
   */
  readonly listening: boolean;
  /**
   * Told each time `listening` changes. On becoming true a reader re-reads once: what changed
   * while nobody listened was not announced.
   */
  onListening(fn: (listening: boolean) => void): () => void;
  /** Whether this process is the fleet's leader now (always on SQLite). */
  readonly leader: boolean;
  /**
   * Joins the election (on first use) and tells `fn` each time leadership is won or lost, and
   * once at once with the current state. A leader that loses its connection steps down before
   * another can be elected, as far as it can tell (docs/architecture.md §5).
   */
  onLeader(fn: (leader: boolean) => void): () => void;
  /**
   * Tells `fn` each time leadership is won or lost, and once at once, without joining the
   * election: work that belongs with the leader's, whichever process that is (the audit
   * sequencer in a process that does not campaign by itself).
   */
  watchLeader(fn: (leader: boolean) => void): () => void;
  /**
   * Resolves once this process's first bid for leadership is decided (won, lost, or the
   * connection failed); at once when it has not joined the election, and always on SQLite.
   */
  decided(): Promise<void>;
  /** Ends the dedicated connection: leadership is released, listening stops. */
  close(): Promise<void>;
}

/** Sends `payload` on `channel` as part of `trx` (delivered on commit; nothing on SQLite). */
export type FleetNotify = (
  db: Kysely<Database> | Transaction<Database>,
  channel: FleetChannel,
  payload: string,
) => Promise<void>;

const slots = new WeakMap<object, FleetNotify>();

/** Called once by openStore: `db` and every transaction on it notify through `notify`. */
export function bindFleetNotify(db: Kysely<Database>, notify: FleetNotify): void {
  slots.set(db.getExecutor().adapter, notify);
}

/**
 * Announces a change to the fleet from the transaction that made it (or right after the
 * statement, on a database handle). A database not opened by openStore announces nothing.
 */
export function notifyIn(
  db: Kysely<Database> | Transaction<Database>,
  channel: FleetChannel,
  payload: string,
): Promise<void> {
  const notify = slots.get(db.getExecutor().adapter);
  return notify ? notify(db, channel, payload) : Promise.resolve();
}
