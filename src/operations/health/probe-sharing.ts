/**
 * @module Health probes once per tool across the fleet (docs/architecture.md §5, "Replicas that
 * agree"). When replicas share one database (Store.fleet `shared`), only the fleet's elected leader
 * runs the scheduled probes; each outcome is written to `tool_probe_outcomes` (the latest per
 * version) and announced on the fleet's `probes` channel from the same transaction, and every
 * other replica's monitor reads it back and takes it as its own probe's outcome. A replica that
 * cannot hear (its fleet connection down) reads what is new every `syncEveryMs`; one that starts,
 * or hears again after a gap, reads what it missed. The leader dies: the next one elected already
 * holds the schedule (followers keep it from the outcomes they apply) and probes on from there.
 * Alone on its database (SQLite) a monitor probes everything itself and writes nothing here.
 */
import { sql } from 'kysely';
import { FLEET_CHANNELS, notifyIn, type Store } from '../../records/store/index.js';

/** A probe's outcome as another replica recorded it. */
export interface SharedProbe {
  readonly toolId: string;
  readonly version: string;
  readonly ok: boolean;
  readonly latencyMs: number;
  readonly rule: string | null;
}

const PAGE = 1000;
/** Outcomes held for versions not tracked yet, at most. */
const HELD_MAX = 10_000;

export class ProbeSharing {
  readonly #store: Store;
  /** Applies an outcome; false when this replica does not track that version (yet). */
  readonly #apply: (p: SharedProbe) => boolean;
  /**
   * Outcomes of versions this replica did not track when they were read (registered a moment
   * ago, its catalog not yet caught up): applied once it does (retry), the latest per version.
   */
  readonly #held = new Map<string, SharedProbe>();
  readonly #onError: (err: unknown) => void;
  #leading: boolean;
  #lastSeen = '';
  #reading: Promise<void> | null = null;
  #again = false;
  readonly #unsubscribe: (() => void)[] = [];

  constructor(store: Store, apply: (p: SharedProbe) => boolean, onError: (err: unknown) => void) {
    this.#store = store;
    this.#apply = apply;
    this.#onError = onError;
    this.#leading = !store.fleet.shared;
  }

  /** Whether this replica runs the scheduled probes now (always when alone on its database). */
  get leading(): boolean {
    return this.#leading;
  }

  /** Joins the election, listens for the others' outcomes and reads those recorded so far. */
  async start(): Promise<void> {
    const { fleet } = this.#store;
    if (!fleet.shared) return;
    this.#unsubscribe.push(
      fleet.onLeader((leading) => {
        this.#leading = leading;
      }),
      fleet.listen(FLEET_CHANNELS.probes, () => void this.read()),
      fleet.onListening((on) => {
        if (on) void this.read();
      }),
    );
    await this.read();
  }

  /** Applies the held outcomes of versions this replica tracks now (after its catalog sync). */
  retry(): void {
    if (this.#leading) {
      this.#held.clear();
      return;
    }
    for (const [key, p] of this.#held) if (this.#apply(p)) this.#held.delete(key);
  }

  stop(): void {
    for (const off of this.#unsubscribe.splice(0)) off();
  }

  /** The fallback: reads what is new while the fleet's notifications cannot arrive. */
  poll(): void {
    if (this.#store.fleet.shared && !this.#leading && !this.#store.fleet.listening)
      void this.read();
  }

  /** Records this replica's probe for the others (nothing when alone); never throws. */
  async record(p: SharedProbe, at: Date): Promise<void> {
    if (!this.#store.fleet.shared) return;
    const row = {
      tool_id: p.toolId,
      version: p.version,
      probed_at: at.toISOString(),
      ok: p.ok ? 1 : 0,
      latency_ms: Math.max(0, Math.round(p.latencyMs)),
      rule: p.rule,
    };
    try {
      await this.#store.db.transaction().execute(async (trx) => {
        await trx
          .insertInto('tool_probe_outcomes')
          .values(row)
          .onConflict((oc) =>
            oc.columns(['tool_id', 'version']).doUpdateSet({
              probed_at: row.probed_at,
              ok: row.ok,
              latency_ms: row.latency_ms,
              rule: row.rule,
            }),
          )
          .execute();
        // Delivered when this commits: the readers find the row.
        await notifyIn(trx, FLEET_CHANNELS.probes, '');
      });
    } catch (err) {
      this.#onError(err);
    }
  }

  /** Applies every outcome recorded since the last read (one read at a time; never throws). */
  read(): Promise<void> {
    if (this.#reading) {
      this.#again = true;
      return this.#reading;
    }
    this.#reading = (async () => {
      do {
        this.#again = false;
        await this.#page().catch(this.#onError);
      } while (this.#again);
    })().finally(() => {
      this.#reading = null;
    });
    return this.#reading;
  }

  async #page(): Promise<void> {
    for (;;) {
      const rows = await this.#store.db
        .selectFrom('tool_probe_outcomes')
        .selectAll()
        .where('probed_at', '>', this.#lastSeen)
        .orderBy(sql`probed_at`)
        .limit(PAGE)
        .execute();
      for (const r of rows) {
        if (r.probed_at > this.#lastSeen) this.#lastSeen = r.probed_at;
        // The leader's own outcomes are applied as it probes.
        if (this.#leading) continue;
        const p: SharedProbe = {
          toolId: r.tool_id,
          version: r.version,
          ok: r.ok === 1,
          latencyMs: r.latency_ms,
          rule: r.rule,
        };
        const key = `${p.toolId}@${p.version}`;
        this.#held.delete(key);
        if (!this.#apply(p) && this.#held.size < HELD_MAX) this.#held.set(key, p);
      }
      if (rows.length < PAGE) return;
    }
  }
}
