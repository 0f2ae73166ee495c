/**
 * @module The audit writer's and the audit sequencer's metrics (C16, docs/architecture.md §5):
 * records a failed commit gave up, by kind (any store); and on a PostgreSQL fleet's sequencing
 * replica ("The audit log across replicas"), how long staged records wait to be linked into the
 * chain, how many were, how often the oldest waited past the bound, and how many integrations
 * failed (rolled back: nothing of that batch went in, and it is tried again). Other replicas, and
 * a gateway on SQLite, declare the sequencer's with no sample.
 */
import { Counter, Histogram, type Registry } from 'prom-client';

export class IntegrationMetrics {
  readonly #wait: Histogram;
  readonly #records: Counter;
  readonly #late: Counter;
  readonly #failed: Counter<'kind'>;
  readonly #failures: Counter;

  constructor(registry: Registry) {
    const registers = [registry];
    this.#wait = new Histogram({
      name: 'toolgate_audit_integration_wait_seconds',
      help: 'Per integration of staged audit records, how long its oldest record waited from its staging to the integration’s commit',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 1, 2.5, 5],
      registers,
    });
    this.#records = new Counter({
      name: 'toolgate_audit_integrated_records_total',
      help: 'Staged audit records (every replica’s) linked into the chain by this replica',
      registers,
    });
    this.#failed = new Counter({
      name: 'toolgate_audit_records_failed_total',
      help: 'Audit records a failed commit gave up after the store’s retries, by kind (a call.post is a call that ran without its result in the log)',
      labelNames: ['kind'],
      registers,
    });
    this.#late = new Counter({
      name: 'toolgate_audit_integration_late_total',
      help: 'Integrations whose oldest record waited past the integration bound (200 ms by default)',
      registers,
    });
    this.#failures = new Counter({
      name: 'toolgate_audit_integration_failures_total',
      help: 'Integrations of staged audit records by this replica that failed and rolled back (their records wait staged and are tried again)',
      registers,
    });
  }

  /** An integration of `count` records, its oldest having waited `waitedMs` (onIntegrated). */
  integrated(count: number, waitedMs: number): void {
    this.#records.inc(count);
    this.#wait.observe(waitedMs / 1000);
  }

  /** Records a failed commit gave up (the audit writer's onFailed), counted by kind. */
  failed(kinds: readonly string[]): void {
    for (const kind of kinds) this.#failed.inc({ kind });
  }

  /** An integration whose oldest record waited past the bound (onLate). */
  late(): void {
    this.#late.inc();
  }

  /** An integration that failed and rolled back (onError of the sequencer). */
  integrationFailed(): void {
    this.#failures.inc();
  }
}
