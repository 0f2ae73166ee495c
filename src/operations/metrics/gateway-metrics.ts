/**
 * @module Prometheus metrics (C16), one Registry per gateway (never prom-client's
 * global one, so several gateways in a process do not collide). Call metrics are derived from
 * committed audit records, so they count exactly what the audit log holds; approval states are
 * read from the store at scrape time, so they agree across replicas. Labels hold only registered
 * tool ids, versions and rule names — never an agent's free text (an unregistered name is counted,
 * not labelled).
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AuditRecord } from '../../gate/index.js';
import type { Alert, DetectorSink, WebhookOutcome } from '../detectors/index.js';
import type { DeliveryOutcome, NotificationKind } from '../notify/index.js';
import type { NoticeOutcome, OwnerNoticeKind, OwnerNoticeSink } from '../owners/index.js';
import { IntegrationMetrics } from './integration-metrics.js';
import { processRegistry } from './process-metrics.js';
import { RequestMetrics } from './request-metrics.js';

export interface GatewayMetricsOptions {
  /** Counts of call approvals by status (pending, approved, rejected, expired…), read at scrape. */
  readonly approvalStates?: () => Promise<Record<string, number>>;
  /**
   * What became of the trace spans (exported, failed, dropped), read at scrape; null while
   * tracing is off (the counter is declared, with no sample).
   */
  readonly traceSpans?: () => Readonly<Record<'exported' | 'failed' | 'dropped', number>> | null;
}

export class GatewayMetrics implements DetectorSink, OwnerNoticeSink {
  readonly registry = new Registry();
  /** The HTTP port's requests and admission refusals (fed by the REST front's hooks). */
  readonly requests = new RequestMetrics(this.registry);
  /** The audit sequencer's integrations, on the replica that sequences (PostgreSQL fleets). */
  readonly integration = new IntegrationMetrics(this.registry);
  /** The process's metrics, shared by every gateway of this process. */
  readonly #process = processRegistry();
  readonly #calls: Counter<'tool'>;
  readonly #errors: Counter<'tool' | 'rule'>;
  readonly #latency: Histogram<'tool'>;
  readonly #denials: Counter<'rule' | 'code'>;
  readonly #unregistered: Counter;
  readonly #approvalsRequested: Counter<'tool'>;
  readonly #deprecated: Counter<'tool' | 'version'>;
  readonly #outcomes: Counter<'tool' | 'outcome'>;
  readonly #auditAppend: Histogram;
  readonly #auditRecords: Counter<'kind'>;
  readonly #alerts: Counter<'detector' | 'suspended'>;
  readonly #webhooks: Counter<'outcome'>;
  readonly #notifications: Counter<'kind' | 'outcome'>;
  readonly #ownerNotices: Counter<'kind' | 'outcome'>;
  readonly #ownerDeliveries: Counter<'outcome'>;
  readonly #detectorDropped: Counter;
  readonly #detectorFailures: Counter;

  constructor(options: GatewayMetricsOptions = {}) {
    const registers = [this.registry];
    this.#calls = new Counter({
      name: 'toolgate_tool_calls_total',
      help: 'Calls that passed the gate and ran, per tool',
      labelNames: ['tool'],
      registers,
    });
    this.#errors = new Counter({
      name: 'toolgate_tool_errors_total',
      help: 'Calls that ran and failed (execution or result checks), per tool and rule',
      labelNames: ['tool', 'rule'],
      registers,
    });
    this.#latency = new Histogram({
      name: 'toolgate_tool_call_duration_seconds',
      help: 'Gate plus execution time of calls that ran, per tool',
      labelNames: ['tool'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.#denials = new Counter({
      name: 'toolgate_denials_total',
      help: 'Calls denied by the gate, by the rule that fired and the error code',
      labelNames: ['rule', 'code'],
      registers,
    });
    this.#unregistered = new Counter({
      name: 'toolgate_unregistered_attempts_total',
      help: 'Calls naming a tool that is not registered (or not in the caller’s set)',
      registers,
    });
    this.#approvalsRequested = new Counter({
      name: 'toolgate_approvals_requested_total',
      help: 'Calls that were held for a human approval, per tool',
      labelNames: ['tool'],
      registers,
    });
    readAtScrape(options, registers);
    this.#deprecated = new Counter({
      name: 'toolgate_deprecated_calls_total',
      help: 'Calls to a deprecated tool version, per tool and version',
      labelNames: ['tool', 'version'],
      registers,
    });
    this.#outcomes = new Counter({
      name: 'toolgate_sandbox_outcomes_total',
      help: 'Outcomes of calls that ran (ok, or the rule that ended them), per tool',
      labelNames: ['tool', 'outcome'],
      registers,
    });
    this.#auditAppend = new Histogram({
      name: 'toolgate_audit_append_seconds',
      help: 'Time to commit one group of audit records',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    });
    this.#auditRecords = new Counter({
      name: 'toolgate_audit_records_total',
      help: 'Audit records committed, by kind',
      labelNames: ['kind'],
      registers,
    });
    this.#alerts = new Counter({
      name: 'toolgate_detector_alerts_total',
      help: 'Alerts raised by the detectors, and whether the session was suspended',
      labelNames: ['detector', 'suspended'],
      registers,
    });
    this.#webhooks = new Counter({
      name: 'toolgate_alert_webhooks_total',
      help: 'Alert webhook deliveries by outcome (ok, failed, dropped)',
      labelNames: ['outcome'],
      registers,
    });
    this.#notifications = new Counter({
      name: 'toolgate_notifications_total',
      help: 'Notifications to reviewers by kind and outcome (delivered, rejected, failed, dropped; retried and timed_out per attempt)',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.#ownerNotices = new Counter({
      name: 'toolgate_owner_notices_total',
      help: 'Notices to tool owners by kind (deprecated, retiring, quarantined, orphaned, unhealthy, error_rate) and outcome (sent, deduplicated, rate_limited, unrouted, unknown_tool, invalid, failed)',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.#ownerDeliveries = new Counter({
      name: 'toolgate_owner_notice_deliveries_total',
      help: 'Owner notice webhook deliveries by outcome (delivered, rejected, failed, dropped; retried and timed_out per attempt; unreadable: a channel skipped, its sealed URL does not open)',
      labelNames: ['outcome'],
      registers,
    });
    this.#detectorDropped = new Counter({
      name: 'toolgate_detector_dropped_records_total',
      help: 'Audit records the detectors could not keep up with',
      registers,
    });
    this.#detectorFailures = new Counter({
      name: 'toolgate_detector_failures_total',
      help: 'Detector work that failed (baseline load, alert record, event, suspension)',
      registers,
    });
  }

  /** Feed with every committed batch (AuditWriter.onCommitted). Never throws. */
  observeCommitted(batch: readonly AuditRecord[], commitMs: number): void {
    this.#auditAppend.observe(commitMs / 1000);
    for (const r of batch) {
      this.#auditRecords.inc({ kind: r.kind });
      const tool = r.toolId ?? '';
      switch (r.kind) {
        case 'call.pre': {
          this.#calls.inc({ tool });
          const warnings = r.details?.warnings;
          if (Array.isArray(warnings) && warnings.length > 0)
            this.#deprecated.inc({ tool, version: r.toolVersion ?? '' });
          break;
        }
        case 'call.post': {
          const outcome = r.outcome ?? 'unknown';
          this.#outcomes.inc({ tool, outcome });
          if (outcome !== 'ok') this.#errors.inc({ tool, rule: r.rule ?? outcome });
          if (r.durationMs !== undefined) this.#latency.observe({ tool }, r.durationMs / 1000);
          break;
        }
        case 'call.denied':
          this.#denials.inc({ rule: r.rule ?? 'unknown', code: r.code ?? 'unknown' });
          if (r.code === 'TOOL_NOT_REGISTERED') this.#unregistered.inc();
          break;
        case 'call.pending_approval':
          this.#approvalsRequested.inc({ tool });
          break;
        case 'call.replayed':
        case 'alert':
          break;
      }
    }
  }

  alert(alert: Alert, suspended: boolean): void {
    this.#alerts.inc({ detector: alert.detector, suspended: String(suspended) });
  }

  webhook(outcome: WebhookOutcome): void {
    this.#webhooks.inc({ outcome });
  }

  notification(kind: NotificationKind, outcome: DeliveryOutcome): void {
    this.#notifications.inc({ kind, outcome });
  }

  ownerNotice(kind: OwnerNoticeKind, outcome: NoticeOutcome): void {
    this.#ownerNotices.inc({ kind, outcome });
  }

  ownerNoticeDelivery(outcome: DeliveryOutcome | 'unreadable'): void {
    this.#ownerDeliveries.inc({ outcome });
  }

  droppedRecords(n: number): void {
    this.#detectorDropped.inc(n);
  }

  failure(): void {
    this.#detectorFailures.inc();
  }

  /** The Prometheus text exposition (this gateway's metrics, then the process's) and its type. */
  async render(): Promise<{ contentType: string; body: string }> {
    const both = Registry.merge([this.registry, this.#process]);
    return { contentType: both.contentType, body: await both.metrics() };
  }
}

/**
 * The metrics read at scrape time from what their options name: call approvals by status, and
 * what became of the trace spans.
 */
function readAtScrape(options: GatewayMetricsOptions, registers: Registry[]): void {
  const states = options.approvalStates;
  if (states) {
    new Gauge({
      name: 'toolgate_approvals',
      help: 'Call approvals by status (pending, approved, rejected, expired, consumed)',
      labelNames: ['status'],
      registers,
      async collect() {
        this.reset();
        for (const [status, n] of Object.entries(await states())) this.set({ status }, n);
      },
    });
  }
  const spans = options.traceSpans;
  if (spans) {
    new Counter({
      name: 'toolgate_trace_spans_total',
      help: 'Trace spans by outcome: exported, failed (the export failed or timed out) or dropped (the export queue was full); none while tracing is off',
      labelNames: ['outcome'],
      registers,
      collect() {
        const counts = spans();
        if (counts === null) return;
        this.reset();
        for (const [outcome, n] of Object.entries(counts)) this.inc({ outcome }, n);
      },
    });
  }
}
