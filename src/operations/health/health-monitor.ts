/**
 * @module The health monitor (C14, docs/architecture.md §8): it tracks every offered tool
 * version, probes those that have a probe on a schedule tiered by access tier (first probe at
 * registration, first probes of existing tools spread over their interval), with a bounded number
 * in flight; it scores each from its probes and from the gate's live outcomes (passive health),
 * keeps a circuit breaker per version, applies admins' overrides, and measures probe coverage.
 * State changes are told to subscribers (`on`), written as events (so audit records) and counted;
 * a change in or out of `unavailable` bumps the catalog revision, so sessions' permitted sets
 * and MCP list_changed follow. The gate's side (`admit`, `observe`) is synchronous and reads
 * memory only: no database round trip on a call's path.
 */
import type { Registry } from 'prom-client';
import {
  type Actor,
  type Clock,
  isToolgateError,
  type Problem,
  problem,
  systemActor,
  systemClock,
  ToolgateError,
} from '../../core/index.js';
import type { AccessTier, CatalogService, ToolDefinition } from '../../domain/catalog/index.js';
import {
  appendEvent,
  bumpCatalogRevision,
  readCatalogRevision,
  type Store,
} from '../../records/store/index.js';
import { CircuitBreaker, PROBE_SOURCE } from './circuit-breaker.js';
import { DEFAULT_HEALTH_CONFIG, type HealthConfig } from './health-config.js';
import { HealthMetrics } from './health-metrics.js';
import {
  deleteOverride,
  type HealthOverride,
  loadOverrides,
  OVERRIDE_STATES,
  type OverrideState,
  writeOverride,
} from './health-overrides.js';
import { CallWindow, healthScore, OutcomeWindow, outcomeQuality } from './health-score.js';
import type {
  BreakerState,
  HealthCause,
  HealthEvent,
  HealthGate,
  HealthReader,
  HealthRefusal,
  HealthState,
  ToolHealthView,
} from './health-state.js';
import { ProbeSchedule, spreadOffset } from './probe-schedule.js';
import { ProbeSharing, type SharedProbe } from './probe-sharing.js';
import type { ProbeKind, ProbeOutcome, Prober } from './tool-prober.js';

export interface HealthMonitorDependencies {
  readonly store: Store;
  readonly catalog: Pick<CatalogService, 'offeredMajors' | 'get' | 'onCommit' | 'quarantine'>;
  readonly prober: Prober;
  readonly config?: HealthConfig;
  readonly clock?: Clock;
  /** The gateway's metrics registry; the monitor registers its own metrics there. */
  readonly registry?: Registry;
  readonly onError?: (err: unknown) => void;
}

/** One tracked version's health as an admin sees it (REST, CLI). */
export interface ToolHealthStatus {
  readonly tool_id: string;
  readonly version: string;
  readonly owner: string;
  readonly state: HealthState;
  readonly score: number;
  readonly breaker: BreakerState;
  readonly consecutive_failures: number;
  readonly probe: ProbeKind | null;
  readonly interval_ms: number;
  readonly last_probe_at: string | null;
  readonly last_probe_ok: boolean | null;
  readonly last_latency_ms: number | null;
  readonly last_rule: string | null;
  readonly override: {
    readonly state: OverrideState;
    readonly reason: string;
    readonly set_by: string;
    readonly set_at: string;
    readonly expires_at: string;
  } | null;
}

export interface OverrideInput {
  readonly state: unknown;
  readonly reason: unknown;
  /** An ISO 8601 time in the future, within the longest override. */
  readonly expires_at: unknown;
}

interface Tracked {
  readonly key: string;
  readonly id: string;
  readonly version: string;
  owner: string;
  def: ToolDefinition;
  hash: string;
  kind: ProbeKind | null;
  intervalMs: number;
  targetMs: number;
  readonly probes: OutcomeWindow;
  readonly calls: CallWindow;
  readonly breaker: CircuitBreaker;
  view: ToolHealthView;
  readonly trackedAt: number;
  lastProbeAt: number | null;
  lastProbeOk: boolean | null;
  lastLatencyMs: number | null;
  lastRule: string | null;
}

const UNCHECKED: ToolHealthView = Object.freeze({ state: 'unchecked', score: 0 });
const HEALTH_ACTOR = systemActor('health');
const MAX_REASON = 500;
const SYNC_DEBOUNCE_MS = 20;

const keyOf = (id: string, version: string): string => `${id}\u0000${version}`;

/**
 * The next probe of a tool after a good one: at its own phase of the interval (a stable offset
 * from the epoch), at least half an interval away. However tools were registered — ten thousand
 * in one file — their probes stay spread evenly over the interval, never bunched.
 */
function nextSlot(key: string, intervalMs: number, now: number): number {
  const phase = spreadOffset(key, intervalMs);
  let slot = now - ((now - phase) % intervalMs) + intervalMs;
  if (slot - now < intervalMs / 2) slot += intervalMs;
  return slot;
}

export class HealthMonitor implements HealthReader, HealthGate {
  readonly #store: Store;
  readonly #catalog: HealthMonitorDependencies['catalog'];
  readonly #prober: Prober;
  readonly #config: HealthConfig;
  readonly #clock: Clock;
  readonly #onError: (err: unknown) => void;
  readonly #metrics: HealthMetrics | null;
  readonly #tracked = new Map<string, Tracked>();
  /** The same versions by id, then version: the gate's look-ups build no key string. */
  readonly #byId = new Map<string, Map<string, Tracked>>();
  readonly #overrides = new Map<string, HealthOverride & { readonly expiresMs: number }>();
  readonly #schedule = new ProbeSchedule();
  /** Once per tool across the fleet: the leader probes, the others take its outcomes. */
  readonly #sharing: ProbeSharing;
  readonly #listeners = new Set<(e: HealthEvent) => void>();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #ownRevisions = new Set<number>();
  #timers: NodeJS.Timeout[] = [];
  #syncTimer: NodeJS.Timeout | null = null;
  #started = false;
  #paused = false;
  #stopped = false;
  #lastRevision = -1;
  #syncing: Promise<void> | null = null;
  #syncAgain = false;
  #lastCoverageAt = 0;
  #coverage = { probed: 0, overdue: 0, ratio: 1 };
  #alerting = false;
  #pending: { action: string; subject: string; details: Record<string, unknown>; at: Date }[] = [];
  #offeredMoved = false;
  #flushing: Promise<void> | null = null;
  #probesRun = 0;

  constructor(deps: HealthMonitorDependencies) {
    this.#store = deps.store;
    this.#catalog = deps.catalog;
    this.#prober = deps.prober;
    this.#config = deps.config ?? DEFAULT_HEALTH_CONFIG;
    this.#clock = deps.clock ?? systemClock;
    this.#onError = deps.onError ?? (() => {});
    this.#sharing = new ProbeSharing(deps.store, (p) => this.#applyShared(p), this.#onError);
    this.#metrics = deps.registry
      ? new HealthMetrics(deps.registry, {
          byState: () => this.#byState(),
          coverage: () => this.#coverage,
        })
      : null;
    // A burst of registrations is followed once, a moment after it (first probe at registration).
    deps.catalog.onCommit(() => {
      if (this.#syncTimer || this.#stopped) return;
      this.#syncTimer = setTimeout(() => {
        this.#syncTimer = null;
        void this.sync().catch(this.#onError);
      }, SYNC_DEBOUNCE_MS);
      this.#syncTimer.unref();
    });
  }

  /** Loads the offered tools and the overrides, then starts the scheduler. */
  async start(): Promise<void> {
    if (this.#started) return;
    await this.sync();
    await this.#sharing.start();
    this.#started = true;
    const every = (ms: number, fn: () => void) => {
      const t = setInterval(fn, ms);
      t.unref();
      this.#timers.push(t);
    };
    every(this.#config.tickMs, () => this.#tick());
    every(this.#config.syncEveryMs, () => {
      void this.#pollRevision();
      this.#sharing.poll();
    });
    this.#tick();
  }

  /** Stops probing; waits for probes in flight and the events they wrote. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#sharing.stop();
    for (const t of this.#timers) clearInterval(t);
    this.#timers = [];
    if (this.#syncTimer) clearTimeout(this.#syncTimer);
    this.#syncTimer = null;
    await Promise.allSettled([...this.#inFlight]);
    await this.#syncing?.catch(() => {});
    await this.flush();
  }

  /**
   * Pauses probing (nothing new starts; what runs finishes) and resumes it; probes that fell due
   * meanwhile run on resume, as many at once as the bound allows. Live calls still count.
   */
  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    this.#paused = false;
  }

  /** Subscribes to health changes, code-hash mismatches and coverage alerts; returns unsubscribe. */
  on(listener: (e: HealthEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  // --- the gate's side: synchronous, memory only -------------------------------------------

  healthOf(toolId: string, version: string): ToolHealthView {
    const t = this.#byId.get(toolId)?.get(version);
    if (t) return t.view;
    if (this.#overrides.size === 0) return UNCHECKED;
    const o = this.#overrides.get(keyOf(toolId, version));
    return o ? { state: o.state, score: 0 } : UNCHECKED;
  }

  admit(toolId: string, version: string, caller: string): HealthRefusal | null {
    const o = this.#overrides.size === 0 ? undefined : this.#overrides.get(keyOf(toolId, version));
    if (o) {
      return o.state === 'unavailable'
        ? { rule: 'health.override', message: 'the tool is marked unavailable by an administrator' }
        : null;
    }
    const t = this.#byId.get(toolId)?.get(version);
    if (!t) return null;
    const b = t.breaker.state;
    if (b === 'closed') return null;
    // Half-open: a probed tool is tested by its probe; one without lets one live call through.
    if (b === 'half_open' && t.kind === null && t.breaker.takeTrial(caller)) return null;
    return {
      rule: 'health.circuit_open',
      message: 'the tool is failing and unavailable for now; try again later or use an alternative',
    };
  }

  observe(toolId: string, version: string, ok: boolean, durationMs: number, caller: string): void {
    const t = this.#byId.get(toolId)?.get(version);
    if (!t) return;
    const now = this.#now();
    const quality = outcomeQuality(ok, durationMs, t.targetMs);
    const was = t.breaker.state;
    t.breaker.record(ok, now, { kind: 'call', caller });
    if (ok && was !== 'closed') this.#freshHistory(t);
    t.calls.push(quality, caller);
    if (t.breaker.state === 'open' && was !== 'open')
      this.#schedule.set(t.key, t.breaker.halfOpensAt);
    this.#recompute(t, 'call', ok ? null : 'call.failed');
  }

  // --- admin side ----------------------------------------------------------------------------

  status(toolId: string, version: string): ToolHealthStatus {
    const t = this.#tracked.get(keyOf(toolId, version));
    if (!t) {
      throw new ToolgateError(
        'TOOL_NOT_FOUND',
        `${toolId}@${version} is not offered, so not monitored`,
        {
          toolId,
          version,
        },
      );
    }
    return this.#statusOf(t);
  }

  list(filter: { readonly state?: HealthState } = {}): ToolHealthStatus[] {
    const out: ToolHealthStatus[] = [];
    for (const t of this.#tracked.values())
      if (!filter.state || t.view.state === filter.state) out.push(this.#statusOf(t));
    return out.sort(
      (a, b) => a.tool_id.localeCompare(b.tool_id) || a.version.localeCompare(b.version),
    );
  }

  /** Probe coverage now: probed tools, those unprobed past their interval, and the ratio. */
  coverage(): { probed: number; overdue: number; ratio: number } {
    this.#computeCoverage(this.#now());
    return this.#coverage;
  }

  /** Probes run since start (the benchmark's rate). */
  get probesRun(): number {
    return this.#probesRun;
  }

  /** Runs the tool's probe now, outside the schedule; answers its status after. */
  async probeNow(toolId: string, version: string): Promise<ToolHealthStatus> {
    const t = this.#tracked.get(keyOf(toolId, version));
    if (!t) return this.status(toolId, version);
    if (t.kind !== null) await this.#probe(t);
    return this.#statusOf(t);
  }

  /** An admin's override (audited, with a reason and an expiry); replaces one in force. */
  async setOverride(
    toolId: string,
    version: string,
    input: OverrideInput,
    actor: Actor,
  ): Promise<ToolHealthView> {
    const now = this.#clock();
    const problems: Problem[] = [];
    const state = input.state;
    if (typeof state !== 'string' || !(OVERRIDE_STATES as readonly string[]).includes(state))
      problems.push(problem('/state', `must be one of ${OVERRIDE_STATES.join(', ')}`, 'enum'));
    const reason = typeof input.reason === 'string' ? input.reason.trim() : '';
    if (reason === '' || reason.length > MAX_REASON)
      problems.push(problem('/reason', `must be 1–${MAX_REASON} characters`, 'required'));
    const expires =
      typeof input.expires_at === 'string' ? Date.parse(input.expires_at) : Number.NaN;
    if (Number.isNaN(expires) || expires <= now.getTime())
      problems.push(problem('/expires_at', 'must be a time in the future (ISO 8601)', 'format'));
    else if (expires > now.getTime() + this.#config.maxOverrideMs)
      problems.push(
        problem(
          '/expires_at',
          `must be within ${this.#config.maxOverrideMs / 86_400_000} days`,
          'range',
        ),
      );
    if (problems.length > 0)
      throw new ToolgateError('INPUT_INVALID', 'the health override is invalid', { problems });
    await this.#catalog.get(toolId, version);
    const o: HealthOverride = {
      toolId,
      version,
      state: state as OverrideState,
      reason,
      setBy: actor.id,
      setAt: now.toISOString(),
      expiresAt: new Date(expires).toISOString(),
    };
    await this.#ownBump(() => writeOverride(this.#store.db, o, actor, now));
    this.#overrides.set(keyOf(toolId, version), { ...o, expiresMs: expires });
    const t = this.#tracked.get(keyOf(toolId, version));
    if (t) this.#recompute(t, 'override', null);
    return this.healthOf(toolId, version);
  }

  /** Removes an override (audited); HEALTH_OVERRIDE_NOT_FOUND when none is in force. */
  async clearOverride(
    toolId: string,
    version: string,
    actor: Actor,
    reason = 'cleared',
  ): Promise<ToolHealthView> {
    const removed = await this.#ownBump(() =>
      deleteOverride(this.#store.db, toolId, version, actor, this.#clock(), 'cleared', reason),
    );
    if (!removed) {
      throw new ToolgateError(
        'HEALTH_OVERRIDE_NOT_FOUND',
        `${toolId}@${version} has no health override`,
        {
          toolId,
          version,
        },
      );
    }
    this.#overrides.delete(keyOf(toolId, version));
    const t = this.#tracked.get(keyOf(toolId, version));
    if (t) this.#recompute(t, 'override', null);
    return this.healthOf(toolId, version);
  }

  // --- catalog sync --------------------------------------------------------------------------

  /**
   * Follows the catalog: versions newly offered are tracked (probed at once once started: the
   * first probe at registration), versions no longer offered are dropped, overrides reloaded.
   */
  sync(): Promise<void> {
    if (this.#syncing) {
      this.#syncAgain = true;
      return this.#syncing;
    }
    this.#syncing = (async () => {
      try {
        do {
          this.#syncAgain = false;
          await this.#syncOnce();
        } while (this.#syncAgain);
      } finally {
        this.#syncing = null;
      }
    })();
    return this.#syncing;
  }

  async #syncOnce(): Promise<void> {
    const revision = await readCatalogRevision(this.#store.db);
    const offered = await this.#catalog.offeredMajors();
    const overrides = await loadOverrides(this.#store.db);
    this.#lastRevision = revision;
    const now = this.#now();
    const seen = new Set<string>();
    for (const detail of offered) {
      const key = keyOf(detail.id, detail.version);
      seen.add(key);
      const existing = this.#tracked.get(key);
      if (existing && existing.hash === detail.definition_hash) {
        existing.owner = detail.owner;
        continue;
      }
      const def = detail.definition;
      const kind = this.#prober.kindOf(def);
      const intervalMs = this.#intervalOf(def.access_tier);
      const t: Tracked = existing ?? {
        key,
        id: detail.id,
        version: detail.version,
        owner: detail.owner,
        def,
        hash: detail.definition_hash,
        kind,
        intervalMs,
        targetMs: def.sla?.target_latency_ms ?? this.#config.defaultTargetLatencyMs,
        probes: new OutcomeWindow(10),
        calls: new CallWindow(50, this.#config.breakerCallers),
        breaker: new CircuitBreaker(
          this.#config.breakerFailures,
          this.#config.breakerOpenMs,
          this.#config.breakerCallers,
        ),
        view: UNCHECKED,
        trackedAt: now,
        lastProbeAt: null,
        lastProbeOk: null,
        lastLatencyMs: null,
        lastRule: null,
      };
      t.def = def;
      t.hash = detail.definition_hash;
      t.kind = kind;
      t.intervalMs = intervalMs;
      t.targetMs = def.sla?.target_latency_ms ?? this.#config.defaultTargetLatencyMs;
      this.#tracked.set(key, t);
      let versions = this.#byId.get(t.id);
      if (!versions) {
        versions = new Map();
        this.#byId.set(t.id, versions);
      }
      versions.set(t.version, t);
      if (kind !== null) {
        // Registered while running: probed at once. Found at start: spread over the interval.
        this.#schedule.set(key, this.#started ? now : now + spreadOffset(key, intervalMs));
      }
    }
    for (const key of [...this.#tracked.keys()]) {
      if (seen.has(key)) continue;
      const gone = this.#tracked.get(key);
      if (gone) {
        const versions = this.#byId.get(gone.id);
        versions?.delete(gone.version);
        if (versions?.size === 0) this.#byId.delete(gone.id);
      }
      this.#tracked.delete(key);
      this.#schedule.delete(key);
    }
    const loaded = new Map(overrides.map((o) => [keyOf(o.toolId, o.version), o]));
    for (const key of [...this.#overrides.keys()])
      if (!loaded.has(key)) this.#overrides.delete(key);
    for (const [key, o] of loaded)
      this.#overrides.set(key, { ...o, expiresMs: Date.parse(o.expiresAt) });
    for (const t of this.#tracked.values()) this.#recompute(t, 'override', null);
    this.#sharing.retry(); // outcomes recorded before this replica tracked their versions
  }

  async #pollRevision(): Promise<void> {
    if (this.#stopped) return;
    try {
      const revision = await readCatalogRevision(this.#store.db);
      if (revision === this.#lastRevision) return;
      if (this.#ownRevisions.has(revision)) {
        // Our own bump (a health change): nothing in the catalog moved.
        this.#ownRevisions.delete(revision);
        this.#lastRevision = revision;
        return;
      }
      await this.sync();
    } catch (err) {
      this.#onError(err);
    }
  }

  /** Runs a write that bumps the catalog revision, remembering the revision as ours. */
  async #ownBump<T>(write: () => Promise<T>): Promise<T> {
    const out = await write();
    const revision = await readCatalogRevision(this.#store.db);
    if (this.#ownRevisions.size > 64) this.#ownRevisions.clear();
    this.#ownRevisions.add(revision);
    return out;
  }

  // --- the scheduler -------------------------------------------------------------------------

  #tick(): void {
    if (this.#stopped || this.#paused) return;
    const now = this.#now();
    for (const [key, o] of this.#overrides) {
      if (o.expiresMs > now) continue;
      this.#overrides.delete(key);
      const t = this.#tracked.get(key);
      if (t) this.#recompute(t, 'override_expired', null);
      void deleteOverride(
        this.#store.db,
        o.toolId,
        o.version,
        HEALTH_ACTOR,
        this.#clock(),
        'expired',
        o.reason,
      ).catch(this.#onError);
    }
    const slots = this.#config.maxConcurrentProbes - this.#inFlight.size;
    if (slots > 0) {
      for (const key of this.#schedule.popDue(now, slots)) {
        const t = this.#tracked.get(key);
        if (!t) continue;
        if (t.breaker.state === 'open') {
          if (!t.breaker.tryHalfOpen(now)) {
            this.#schedule.set(key, t.breaker.halfOpensAt);
            continue;
          }
          this.#recompute(t, 'breaker', null);
        }
        if (t.kind === null) continue;
        // Another replica leads: it probes; this one keeps the slot in case it takes over.
        if (!this.#sharing.leading) {
          this.#schedule.set(key, now + Math.min(t.intervalMs, this.#config.confirmAfterMs));
          continue;
        }
        const run = this.#probe(t).finally(() => this.#inFlight.delete(run));
        this.#inFlight.add(run);
      }
    }
    if (now - this.#lastCoverageAt >= this.#config.coverageEveryMs) this.#checkCoverage(now);
  }

  async #probe(t: Tracked): Promise<void> {
    let outcome: ProbeOutcome;
    try {
      outcome = await this.#prober.probe(t.def, this.#config.probeTimeoutMs);
    } catch {
      outcome = { ok: false, latencyMs: 0, rule: 'probe.error', message: 'the probe failed' };
    }
    this.#probesRun += 1;
    if (this.#tracked.get(t.key) !== t) return;
    // Counted where it ran: another replica's outcome applied here is no probe of this one's.
    this.#metrics?.probe(t.kind ?? 'none', outcome.ok, outcome.latencyMs);
    const rule = outcome.ok ? null : outcome.rule;
    const shared = { toolId: t.id, version: t.version, ok: outcome.ok, rule };
    await this.#sharing.record({ ...shared, latencyMs: outcome.latencyMs }, this.#clock());
    this.#afterProbe(t, outcome);
    if (!outcome.ok && outcome.codeHash) await this.#codeHashMismatch(t, outcome.codeHash);
  }

  /** Another replica's probe of a version this one tracks, taken as its own. */
  #applyShared(p: SharedProbe): boolean {
    const t = this.#byId.get(p.toolId)?.get(p.version);
    if (!t || t.kind === null) return t !== undefined;
    const outcome: ProbeOutcome = p.ok
      ? { ok: true, latencyMs: p.latencyMs }
      : { ok: false, latencyMs: p.latencyMs, rule: p.rule ?? 'probe.error', message: '' };
    this.#afterProbe(t, outcome);
    return true;
  }

  #afterProbe(t: Tracked, outcome: ProbeOutcome): void {
    const now = this.#now();
    t.lastProbeAt = now;
    t.lastProbeOk = outcome.ok;
    t.lastLatencyMs = Math.round(outcome.latencyMs);
    t.lastRule = outcome.ok ? null : outcome.rule;
    const quality = outcomeQuality(outcome.ok, outcome.latencyMs, t.targetMs);
    const was = t.breaker.state;
    t.breaker.record(outcome.ok, now, PROBE_SOURCE);
    if (outcome.ok && was !== 'closed') this.#freshHistory(t);
    t.probes.push(quality);
    if (!this.#stopped) {
      const next =
        t.breaker.state === 'open'
          ? t.breaker.halfOpensAt
          : outcome.ok
            ? nextSlot(t.key, t.intervalMs, now)
            : now + Math.min(t.intervalMs, this.#config.confirmAfterMs);
      this.#schedule.set(t.key, next);
    }
    this.#recompute(t, 'probe', outcome.ok ? null : outcome.rule);
  }

  /** Recovered after an open breaker: history starts again from the success that follows. */
  #freshHistory(t: Tracked): void {
    t.probes.clear();
    t.calls.clear();
  }

  /** Seed §8: the code on disk is not the code registered — quarantined, the owner told. */
  async #codeHashMismatch(t: Tracked, hash: { expected: string; actual: string }): Promise<void> {
    this.#metrics?.codeHashMismatch();
    const at = this.#clock().toISOString();
    this.#emit({
      kind: 'code_hash_mismatch',
      toolId: t.id,
      version: t.version,
      owner: t.owner,
      expected: hash.expected,
      actual: hash.actual,
      at,
    });
    try {
      await this.#catalog.quarantine(
        t.id,
        t.version,
        HEALTH_ACTOR,
        `code_hash mismatch found by a health probe: registered ${hash.expected}, on disk ${hash.actual}`,
      );
    } catch (err) {
      if (!isToolgateError(err) || err.code !== 'QUARANTINE_STATE') this.#onError(err);
    }
  }

  // --- state, events, coverage ---------------------------------------------------------------

  #recompute(t: Tracked, cause: HealthCause, rule: string | null): void {
    const score = healthScore(t.probes, t.calls);
    const state = this.#stateOf(t, score);
    const from = t.view.state;
    if (state === from && score === t.view.score) return;
    t.view = Object.freeze({ state, score: state === 'unchecked' ? 0 : score });
    if (state === from) return;
    this.#metrics?.change(state);
    const at = this.#clock();
    this.#emit({
      kind: 'health_changed',
      toolId: t.id,
      version: t.version,
      owner: t.owner,
      from,
      to: state,
      score: t.view.score,
      cause,
      rule,
      at: at.toISOString(),
    });
    if ((from === 'unavailable') !== (state === 'unavailable')) this.#offeredMoved = true;
    // A new tool's first good probe is no change worth a record (ten thousand at a registration);
    // every other change is audited.
    if (from === 'unchecked' && state === 'healthy') return;
    this.#queue('tool.health_changed', `tool:${t.id}@${t.version}`, at, {
      from,
      to: state,
      score: t.view.score,
      cause,
      rule,
      owner: t.owner,
    });
  }

  #stateOf(t: Tracked, score: number): HealthState {
    const o = this.#overrides.get(t.key);
    if (o) return o.state;
    const b = t.breaker.state;
    if (b === 'open' || (b === 'half_open' && t.kind !== null)) return 'unavailable';
    if (t.probes.count + t.calls.count === 0) return 'unchecked';
    return score >= this.#config.healthyAtScore ? 'healthy' : 'degraded';
  }

  #checkCoverage(now: number): void {
    this.#computeCoverage(now);
    const { probed, overdue } = this.#coverage;
    const at = this.#clock();
    if (overdue > 0 && !this.#alerting) {
      this.#alerting = true;
      this.#metrics?.coverageAlert();
      const sample = this.#overdueSample(now);
      this.#emit({ kind: 'coverage_alert', probed, overdue, sample, at: at.toISOString() });
      this.#queue('health.coverage_alert', 'health:coverage', at, { probed, overdue, sample });
    } else if (overdue === 0 && this.#alerting) {
      this.#alerting = false;
      this.#emit({ kind: 'coverage_restored', probed, overdue, sample: [], at: at.toISOString() });
      this.#queue('health.coverage_restored', 'health:coverage', at, { probed });
    }
  }

  #isOverdue(t: Tracked, now: number): boolean {
    const since = t.lastProbeAt ?? t.trackedAt;
    const grace =
      this.#config.coverageGraceMs +
      (t.breaker.state === 'closed' ? 0 : this.#config.breakerOpenMs);
    return now - since > t.intervalMs + grace;
  }

  #computeCoverage(now: number): void {
    this.#lastCoverageAt = now;
    let probed = 0;
    let overdue = 0;
    for (const t of this.#tracked.values()) {
      if (t.kind === null) continue;
      probed += 1;
      if (this.#isOverdue(t, now)) overdue += 1;
    }
    this.#coverage = { probed, overdue, ratio: probed === 0 ? 1 : (probed - overdue) / probed };
  }

  #overdueSample(now: number): string[] {
    const out: string[] = [];
    for (const t of this.#tracked.values()) {
      if (out.length >= 10) break;
      if (t.kind !== null && this.#isOverdue(t, now)) out.push(`${t.id}@${t.version}`);
    }
    return out;
  }

  #emit(event: HealthEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (err) {
        this.#onError(err);
      }
    }
  }

  /** Events are written in batches, off the call path; one revision bump per batch at most. */
  #queue(action: string, subject: string, at: Date, details: Record<string, unknown>): void {
    this.#pending.push({ action, subject, details, at });
    if (!this.#flushing) this.#flushing = this.#flushLoop();
  }

  async #flushLoop(): Promise<void> {
    try {
      await Promise.resolve();
      while (this.#pending.length > 0) {
        const batch = this.#pending.splice(0, 100);
        const bump = this.#offeredMoved;
        this.#offeredMoved = false;
        try {
          await this.#ownBump(() =>
            this.#store.db.transaction().execute(async (trx) => {
              for (const e of batch)
                await appendEvent(trx, HEALTH_ACTOR, e.at, {
                  action: e.action,
                  subject: e.subject,
                  details: e.details,
                });
              if (bump) await bumpCatalogRevision(trx);
            }),
          );
        } catch (err) {
          this.#onError(err);
        }
      }
    } finally {
      this.#flushing = null;
    }
  }

  /** Waits until every health event queued so far is written. */
  async flush(): Promise<void> {
    while (this.#flushing) await this.#flushing;
  }

  #statusOf(t: Tracked): ToolHealthStatus {
    const o = this.#overrides.get(t.key);
    return {
      tool_id: t.id,
      version: t.version,
      owner: t.owner,
      state: t.view.state,
      score: t.view.score,
      breaker: t.breaker.state,
      consecutive_failures: t.breaker.consecutiveFailures,
      probe: t.kind,
      interval_ms: t.intervalMs,
      last_probe_at: t.lastProbeAt === null ? null : new Date(t.lastProbeAt).toISOString(),
      last_probe_ok: t.lastProbeOk,
      last_latency_ms: t.lastLatencyMs,
      last_rule: t.lastRule,
      override: o
        ? {
            state: o.state,
            reason: o.reason,
            set_by: o.setBy,
            set_at: o.setAt,
            expires_at: o.expiresAt,
          }
        : null,
    };
  }

  #byState(): Record<HealthState, number> {
    const out: Record<HealthState, number> = {
      unchecked: 0,
      healthy: 0,
      degraded: 0,
      unavailable: 0,
    };
    for (const t of this.#tracked.values()) out[t.view.state] += 1;
    return out;
  }

  #intervalOf(tier: AccessTier): number {
    return this.#config.intervalMs[tier];
  }

  #now(): number {
    return this.#clock().getTime();
  }
}
