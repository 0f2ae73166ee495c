/**
 * @module PostgreSQL's fleet slot (Store.fleet, docs/architecture.md §5): one dedicated connection
 * per process, apart from the pool, that LISTENs on every channel asked for and campaigns for the
 * fleet's leadership with a session-level advisory lock (`pg_try_advisory_lock`, tried every
 * ELECT_MS while another holds it). The server releases the lock when the holder's connection
 * ends, a killed process's included, so another replica takes over within ELECT_MS of the server
 * seeing the connection close. A leader checks its connection every HEARTBEAT_MS and steps down
 * (and reconnects) when a check fails or takes longer than QUERY_TIMEOUT_MS; when the connection
 * is down, listeners are told (`listening` false) and poll until it is back and LISTENs again.
 * A process that stops answering while it leads (stopped, frozen, its event loop blocked) keeps
 * its connection, and so the lock, open: the server ends that connection once it has been idle
 * for FROZEN_MS (`idle_session_timeout`, which a live process's checks never reach), and the lead
 * passes to another replica (attack round 30, F1).
 */
import { sql } from 'kysely';
import type { Client } from 'pg';
import type { Fleet, FleetChannel, FleetNotify } from '../fleet.js';
import { LOCK_CLASSES } from '../key-lock.js';

/** How often a replica that does not lead tries to take the leader's lock. */
export const ELECT_MS = 200;
/** How often the leader (or a replica only listening) checks its connection. */
const HEARTBEAT_MS = 1000;
/** A check that takes longer means the connection is lost: leadership is given up. */
const QUERY_TIMEOUT_MS = 2000;
/**
 * A fleet connection idle this long belongs to a process that stopped answering: the server ends
 * it (a live one checks every HEARTBEAT_MS, or every ELECT_MS while it campaigns).
 */
export const FROZEN_MS = 5000;
const RECONNECT_MS = 250;
const RECONNECT_MAX_MS = 5000;

export const notify: FleetNotify = async (db, channel, payload) => {
  await sql`select pg_notify(${channel}, ${payload})`.execute(db);
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** `work`, or a rejection once `ms` passed without an answer. */
function timed<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('the fleet connection did not answer')), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

export class PostgresFleet implements Fleet {
  readonly shared = true;
  readonly #url: string;
  readonly #handlers = new Map<FleetChannel, Set<(payload: string) => void>>();
  readonly #listeningFns = new Set<(listening: boolean) => void>();
  readonly #leaderFns = new Set<(leader: boolean) => void>();
  #client: Client | null = null;
  #listening = false;
  #leader = false;
  #campaign = false;
  #closed = false;
  #running: Promise<void> | null = null;
  #wake: (() => void) | null = null;
  #decided: Promise<void> | null = null;
  #decide: (() => void) | null = null;

  constructor(connectionString: string) {
    this.#url = connectionString;
  }

  get listening(): boolean {
    return this.#listening;
  }

  get leader(): boolean {
    return this.#leader;
  }

  listen(channel: FleetChannel, onMessage: (payload: string) => void): () => void {
    let set = this.#handlers.get(channel);
    if (!set) {
      set = new Set();
      this.#handlers.set(channel, set);
      // Connected already: LISTEN there too; a failure means the connection is going.
      void this.#client?.query(`LISTEN ${channel}`).catch(() => {});
    }
    set.add(onMessage);
    this.#start();
    return () => set.delete(onMessage);
  }

  onListening(fn: (listening: boolean) => void): () => void {
    this.#listeningFns.add(fn);
    return () => this.#listeningFns.delete(fn);
  }

  decided(): Promise<void> {
    return this.#decided ?? Promise.resolve();
  }

  onLeader(fn: (leader: boolean) => void): () => void {
    this.#leaderFns.add(fn);
    fn(this.#leader);
    this.#decided ??= new Promise<void>((resolve) => {
      this.#decide = resolve;
    });
    this.#campaign = true;
    this.#start();
    this.#wake?.();
    return () => this.#leaderFns.delete(fn);
  }

  watchLeader(fn: (leader: boolean) => void): () => void {
    this.#leaderFns.add(fn);
    fn(this.#leader);
    return () => this.#leaderFns.delete(fn);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#decide?.();
    this.#wake?.();
    const client = this.#client;
    this.#client = null;
    await client?.end().catch(() => {});
    await this.#running;
  }

  #start(): void {
    if (this.#closed) return;
    this.#running ??= this.#loop();
  }

  #setListening(on: boolean): void {
    if (this.#listening === on) return;
    this.#listening = on;
    for (const fn of this.#listeningFns) fn(on);
  }

  #setLeader(on: boolean): void {
    if (this.#leader === on) return;
    this.#leader = on;
    for (const fn of this.#leaderFns) fn(on);
  }

  /** Connects, serves until the connection is lost, and again after a pause; never throws. */
  async #loop(): Promise<void> {
    const { default: pg } = await import('pg');
    let backoff = RECONNECT_MS;
    while (!this.#closed) {
      const client = new pg.Client({
        connectionString: this.#url,
        application_name: 'toolgate fleet',
        keepAlive: true,
      });
      // Resolves when the connection ends or fails: without a listener an error would crash.
      const ended = new Promise<void>((resolve) => {
        client.once('end', () => resolve());
        client.on('error', () => resolve());
      });
      try {
        await timed(client.connect(), QUERY_TIMEOUT_MS * 5);
        // PostgreSQL 14 and later; an older server refuses the setting, and keeps a frozen
        // leader's lock until its TCP connection ends.
        await timed(
          client.query(`set idle_session_timeout = ${FROZEN_MS}`),
          QUERY_TIMEOUT_MS,
        ).catch(() => {});
        client.on('notification', (m) => {
          const handlers = this.#handlers.get(m.channel as FleetChannel);
          for (const fn of handlers ?? []) fn(m.payload ?? '');
        });
        for (const channel of this.#handlers.keys()) await client.query(`LISTEN ${channel}`);
        if (this.#closed) {
          // Closed while connecting (close() had no client to end yet): end this one here, or
          // its socket keeps the process alive.
          await client.end().catch(() => {});
          break;
        }
        this.#client = client;
        this.#setListening(true);
        backoff = RECONNECT_MS;
        await this.#serve(client, ended);
      } catch {
        // A failed connection or check: stepped down below, then a new connection.
      }
      this.#client = null;
      this.#setLeader(false);
      this.#setListening(false);
      this.#decide?.();
      void client.end().catch(() => {});
      if (this.#closed) break;
      await sleep(backoff);
      backoff = Math.min(backoff * 2, RECONNECT_MAX_MS);
    }
    this.#setLeader(false);
    this.#setListening(false);
  }

  /** Campaigns and checks the connection until it is lost (throws) or the fleet closes. */
  async #serve(client: Client, ended: Promise<void>): Promise<void> {
    let lost = false;
    void ended.then(() => {
      lost = true;
      this.#wake?.();
    });
    while (!this.#closed && !lost) {
      if (this.#campaign && !this.#leader) {
        const r = await timed(
          client.query<{ won: boolean }>('select pg_try_advisory_lock($1, 0) as won', [
            LOCK_CLASSES.leader,
          ]),
          QUERY_TIMEOUT_MS,
        );
        if (r.rows[0]?.won === true) this.#setLeader(true);
        this.#decide?.();
      } else {
        await timed(client.query('select 1'), QUERY_TIMEOUT_MS);
      }
      const pause = this.#campaign && !this.#leader ? ELECT_MS : HEARTBEAT_MS;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        setTimeout(resolve, pause).unref();
      });
      this.#wake = null;
    }
    if (lost) throw new Error('the fleet connection ended');
  }
}
