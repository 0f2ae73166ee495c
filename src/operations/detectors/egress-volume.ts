/**
 * @module Detector: egress volume above a tool's normal (bytes out over the p99 of its recent
 * history, once it has `min_history` results) or fan-out to many distinct destinations in one
 * session.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../records/store/index.js';
import { BoundedMap } from './bounded-map.js';
import { type Alert, alertOf, type Detector, hostsOf, type Observed } from './detector.js';

/** The last `max` values of a tool, kept both in arrival order and sorted (for percentiles). */
class Reservoir {
  readonly #max: number;
  /** Arrival order as a circular buffer: `#next` is where the oldest value sits once full. */
  readonly #ring: number[] = [];
  #next = 0;
  readonly #sorted: number[] = [];

  constructor(max: number) {
    this.#max = max;
  }

  get size(): number {
    return this.#ring.length;
  }

  add(value: number): void {
    if (this.#ring.length >= this.#max) {
      const old = this.#ring[this.#next] as number;
      this.#sorted.splice(lowerBound(this.#sorted, old), 1);
      this.#ring[this.#next] = value;
      this.#next = (this.#next + 1) % this.#max;
    } else {
      this.#ring.push(value);
    }
    this.#sorted.splice(lowerBound(this.#sorted, value), 0, value);
  }

  /** Nearest-rank percentile. */
  percentile(p: number): number {
    const i = Math.min(this.#sorted.length - 1, Math.ceil((p / 100) * this.#sorted.length) - 1);
    return this.#sorted[Math.max(0, i)] ?? 0;
  }
}

function lowerBound(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] ?? 0) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const MAX_TOOLS = 1_000;
const PER_TOOL = 1_000;
const MAX_SESSIONS = 50_000;
const MAX_HOSTS_PER_SESSION = 1_000;
const HISTORY_ROWS = 100_000;

export class EgressVolumeDetector implements Detector {
  readonly name = 'egress_volume' as const;
  readonly #minHistory: number;
  readonly #fanOut: number;
  readonly #bytes = new BoundedMap<string, Reservoir>(MAX_TOOLS);
  readonly #sessionHosts = new BoundedMap<string, Set<string>>(MAX_SESSIONS);

  constructor(options: { min_history: number; fan_out: number }) {
    this.#minHistory = options.min_history;
    this.#fanOut = options.fan_out;
  }

  async load(db: Kysely<Database>): Promise<void> {
    const rows = await db
      .selectFrom('audit_log')
      .select(['tool_id', 'bytes_out'])
      .where('kind', '=', 'call.post')
      .where('bytes_out', 'is not', null)
      .where('tool_id', 'is not', null)
      .orderBy('seq', 'desc')
      .limit(HISTORY_ROWS)
      .execute();
    for (const row of rows.reverse()) {
      if (row.tool_id === null || row.bytes_out === null) continue;
      this.#reservoir(row.tool_id).add(Number(row.bytes_out));
    }
  }

  #reservoir(toolId: string): Reservoir {
    return this.#bytes.upsert(toolId, () => new Reservoir(PER_TOOL));
  }

  observe(o: Observed): Alert[] {
    const r = o.record;
    if (r.kind === 'call.pre') return this.#fanOutOf(o);
    if (r.kind !== 'call.post' || r.bytesOut === undefined || !r.toolId) return [];
    // Only tools that can send have a volume to compare (the others' bytes out are always 0).
    if (!o.tool || o.tool.egress === 'none') return [];
    const history = this.#reservoir(r.toolId);
    const alerts: Alert[] = [];
    if (history.size >= this.#minHistory) {
      const p99 = history.percentile(99);
      if (r.bytesOut > p99) {
        alerts.push(
          alertOf(this.name, o, `egress volume of ${r.toolId} above its p99`, {
            bytes_out: r.bytesOut,
            p99_bytes: p99,
            history: history.size,
          }),
        );
      }
    }
    history.add(r.bytesOut);
    return alerts;
  }

  #fanOutOf(o: Observed): Alert[] {
    const r = o.record;
    const hosts = hostsOf(r);
    if (!r.sessionId || hosts.length === 0) return [];
    const seen = this.#sessionHosts.upsert(r.sessionId, () => new Set());
    const before = seen.size;
    for (const h of hosts) if (seen.size < MAX_HOSTS_PER_SESSION) seen.add(h);
    // Once per session: when the count crosses the threshold.
    if (before < this.#fanOut && seen.size >= this.#fanOut) {
      return [
        alertOf(this.name, o, `session reached ${seen.size} distinct destinations`, {
          fan_out: seen.size,
          threshold: this.#fanOut,
        }),
      ];
    }
    return [];
  }
}
