/**
 * @module Bounded audit of refusals made before authentication. Anyone can send a request with a
 * bad header, so one audit record per refusal would let a stranger grow the audit log without
 * limit; one shared budget would let a stranger's junk hide the next real refusal (round 7, F6).
 * Per action and window, each peer (its keyed hash, as recorded) has its own sample recorded in
 * full, and a value not yet seen in the window (a new Origin, a new header) is recorded too, a few
 * per peer; a cap across all peers bounds the total. The rest are counted, and one summary record
 * per action carries the counts per peer hash when the window ends. An attack is thus always
 * visible; one peer's junk does not hide another peer's refusal (until many peers together reach
 * the cap) nor its own next few new values; and the log grows by at most `globalCap + 1` records
 * per action per window, whoever sends what.
 */
import type { CallerValues, SecurityEvents } from './agent-api.js';

export interface SamplerOptions {
  /** Refusals recorded in full per action, peer and window. */
  readonly sample?: number;
  /** Refusals of a value new in the window recorded in full per action and peer, beyond `sample`. */
  readonly newValues?: number;
  /** Refusals recorded in full per action and window across all peers. */
  readonly globalCap?: number;
  /** Peers and values remembered per window (memory bound); past it, refusals are only counted. */
  readonly maxKeys?: number;
  readonly windowMs?: number;
}

const DEFAULTS = { sample: 5, newValues: 5, globalCap: 100, maxKeys: 2_000 } as const;
const DEFAULT_WINDOW_MS = 60_000;
/** Peers named in a summary (the most refused first); the others are one `other_peers` count. */
const SUMMARY_PEERS = 20;
const UNKNOWN_PEER = '-';

interface PeerCount {
  recorded: number;
  newValues: number;
  suppressed: number;
}

interface Window {
  recorded: number;
  suppressed: number;
  readonly startedAt: string;
  readonly subject: string;
  readonly peers: Map<string, PeerCount>;
  readonly values: Set<string>;
}

/** What identifies a refusal for sampling: who sent it, and what (both keyed hashes). */
export interface SampleKey {
  /** The peer's address as sent (default: `caller.hashed.remote`). */
  readonly peer?: string;
  /** The refused value (default: what the caller sent, less the peer's address). */
  readonly value?: string;
  /** The record's subject (default `mcp`). */
  readonly subject?: string;
}

export class RefusalSampler {
  readonly #security: Pick<SecurityEvents, 'record' | 'pseudonym'>;
  readonly #o: Required<Omit<SamplerOptions, 'windowMs'>>;
  readonly #windows = new Map<string, Window>();
  readonly #timer: NodeJS.Timeout;

  constructor(
    security: Pick<SecurityEvents, 'record' | 'pseudonym'>,
    options: SamplerOptions = {},
  ) {
    this.#security = security;
    this.#o = {
      sample: options.sample ?? DEFAULTS.sample,
      newValues: options.newValues ?? DEFAULTS.newValues,
      globalCap: Math.max(options.globalCap ?? DEFAULTS.globalCap, options.sample ?? 0),
      maxKeys: options.maxKeys ?? DEFAULTS.maxKeys,
    };
    this.#timer = setInterval(() => void this.flush(), options.windowMs ?? DEFAULT_WINDOW_MS);
    this.#timer.unref();
  }

  /**
   * Records the refusal in full while its peer's sample (or its new value's allowance) and the
   * window's cap last; counts it after that. `caller`: what the refuser sent, kept only as keyed
   * hashes (SecurityEvents.record). Never throws for a full budget: a refusal is always counted.
   */
  async record(
    action: string,
    details: Record<string, unknown>,
    caller?: CallerValues,
    key: SampleKey = {},
  ): Promise<void> {
    let w = this.#windows.get(action);
    if (!w) {
      w = {
        recorded: 0,
        suppressed: 0,
        startedAt: new Date().toISOString(),
        subject: key.subject ?? 'mcp',
        peers: new Map(),
        values: new Set(),
      };
      this.#windows.set(action, w);
    }
    const peerValue = key.peer ?? caller?.hashed?.remote;
    const full = w.peers.size >= this.#o.maxKeys;
    const peer = peerValue === undefined ? UNKNOWN_PEER : this.#security.pseudonym(peerValue);
    let p = w.peers.get(peer);
    if (!p && !full) {
      p = { recorded: 0, newValues: 0, suppressed: 0 };
      w.peers.set(peer, p);
    }
    const valueText = key.value ?? sentValue(caller);
    const value = valueText === '' ? null : this.#security.pseudonym(valueText);
    const newValue = value !== null && !w.values.has(value) && w.values.size < this.#o.maxKeys;
    const inSample = p !== undefined && p.recorded < this.#o.sample;
    const asNew = !inSample && newValue && p !== undefined && p.newValues < this.#o.newValues;
    if (w.recorded >= this.#o.globalCap || !(inSample || asNew)) {
      w.suppressed += 1;
      // A peer past the memory bound is counted among `not_recorded_other_peers`.
      if (p) p.suppressed += 1;
      return;
    }
    w.recorded += 1;
    if (value !== null) w.values.add(value);
    if (inSample) (p as PeerCount).recorded += 1;
    else (p as PeerCount).newValues += 1;
    await this.#security.record(
      action,
      key.subject ?? 'mcp',
      { ...details, sampled: true },
      caller,
    );
  }

  /** Ends every window: one summary record for each action with refusals not recorded in full. */
  async flush(): Promise<void> {
    const windows = [...this.#windows];
    this.#windows.clear();
    for (const [action, w] of windows) {
      if (w.suppressed === 0) continue;
      const counted = [...w.peers].filter(([, p]) => p.suppressed > 0);
      counted.sort((a, b) => b[1].suppressed - a[1].suppressed);
      const named = counted.slice(0, SUMMARY_PEERS);
      const namedTotal = named.reduce((n, [, p]) => n + p.suppressed, 0);
      await this.#security
        .record(`${action}.summary`, w.subject, {
          since: w.startedAt,
          recorded: w.recorded,
          not_recorded: w.suppressed,
          // Keyed hashes of the peers' addresses, as the records name them (`remote`).
          not_recorded_by_peer: Object.fromEntries(named.map(([h, p]) => [h, p.suppressed])),
          not_recorded_other_peers: w.suppressed - namedTotal,
        })
        .catch(() => {});
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
  }
}

/** What the caller sent, less the peer's address: the value a refusal is about. */
function sentValue(caller: CallerValues | undefined): string {
  if (!caller) return '';
  const { remote: _remote, ...hashed } = caller.hashed ?? {};
  const parts = [...Object.entries(hashed).map(([k, v]) => `${k}=${v}`), ...(caller.sent ?? [])];
  return parts.join('\u0000');
}
