/**
 * @module The health monitor's Prometheus metrics (C14, C16), registered in the gateway's own
 * registry: probes by outcome and their duration, state changes, tools by state and probe
 * coverage (read at scrape time from memory), coverage alerts. Labels hold only states, outcomes
 * and probe kinds — never a tool's free text; per-tool history is in the audit log.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { HealthState } from './health-state.js';

export interface HealthSnapshot {
  byState(): Record<HealthState, number>;
  coverage(): { probed: number; overdue: number; ratio: number };
}

export class HealthMetrics {
  readonly #probes: Counter<'kind' | 'outcome'>;
  readonly #probeSeconds: Histogram<'kind'>;
  readonly #changes: Counter<'to'>;
  readonly #alerts: Counter;
  readonly #quarantines: Counter;

  constructor(registry: Registry, snapshot: HealthSnapshot) {
    const registers = [registry];
    this.#probes = new Counter({
      name: 'toolgate_health_probes_total',
      help: 'Health probes run, by probe kind and outcome',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.#probeSeconds = new Histogram({
      name: 'toolgate_health_probe_duration_seconds',
      help: 'How long health probes took, by probe kind',
      labelNames: ['kind'],
      buckets: [0.001, 0.005, 0.025, 0.1, 0.5, 1, 2.5, 10],
      registers,
    });
    this.#changes = new Counter({
      name: 'toolgate_health_changes_total',
      help: 'Tool health state changes, by the state entered',
      labelNames: ['to'],
      registers,
    });
    this.#alerts = new Counter({
      name: 'toolgate_health_coverage_alerts_total',
      help: 'Probe coverage alerts: some tool went unprobed past its interval',
      registers,
    });
    this.#quarantines = new Counter({
      name: 'toolgate_health_code_hash_mismatches_total',
      help: 'Probes that found the code on disk differs from the registered code_hash',
      registers,
    });
    new Gauge({
      name: 'toolgate_tools_by_health',
      help: 'Tracked tool versions by health state',
      labelNames: ['state'],
      registers,
      collect() {
        for (const [state, n] of Object.entries(snapshot.byState())) this.set({ state }, n);
      },
    });
    new Gauge({
      name: 'toolgate_health_probe_coverage_ratio',
      help: 'Share of probed tools whose last probe is within their interval (SLO: 1)',
      registers,
      collect() {
        this.set(snapshot.coverage().ratio);
      },
    });
    new Gauge({
      name: 'toolgate_health_probes_overdue',
      help: 'Probed tools whose last probe is older than their interval',
      registers,
      collect() {
        this.set(snapshot.coverage().overdue);
      },
    });
  }

  probe(kind: string, ok: boolean, ms: number): void {
    this.#probes.inc({ kind, outcome: ok ? 'ok' : 'failed' });
    this.#probeSeconds.observe({ kind }, ms / 1000);
  }

  change(to: HealthState): void {
    this.#changes.inc({ to });
  }

  coverageAlert(): void {
    this.#alerts.inc();
  }

  codeHashMismatch(): void {
    this.#quarantines.inc();
  }
}
