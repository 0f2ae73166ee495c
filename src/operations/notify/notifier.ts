/**
 * @module The notifier: tells every configured channel of a pending approval, a four-eyes change,
 * a grant request and a security review waiting for a decision (decision-notices.ts), a quarantine
 * and a detector alert. Each method only builds a small message and enqueues it: nothing here is ever
 * awaited on an agent's call path, and nothing throws.
 */
import type { Outbound } from '../../core/index.js';
import {
  type AlertFacts,
  alertMessage,
  type ChangeFacts,
  changeMessage,
  NOTIFICATION_KINDS,
  type NotificationKind,
  type NotificationPayload,
  type PendingApprovalFacts,
  pendingApprovalMessage,
  type QuarantineFacts,
  quarantineMessage,
  type ReviewFacts,
  reviewMessage,
} from './notification.js';
import type { NotifyConfig } from './notify-config.js';
import { type DeliveryOutcome, WebhookDelivery } from './webhook-delivery.js';

export type NotifySink = (kind: NotificationKind, outcome: DeliveryOutcome) => void;

export class Notifier {
  readonly #config: NotifyConfig;
  readonly #sink: NotifySink;
  readonly #channels: Map<NotificationKind, WebhookDelivery>[];

  constructor(
    config: NotifyConfig,
    outbound: Pick<Outbound, 'fetch'>,
    sink: NotifySink = () => {},
  ) {
    this.#config = config;
    this.#sink = sink;
    // One delivery per channel and kind, so the outcome is counted under the kind it was for.
    this.#channels = config.webhookUrls.map((url) => {
      const byKind = new Map<NotificationKind, WebhookDelivery>();
      for (const kind of NOTIFICATION_KINDS) {
        byKind.set(
          kind,
          new WebhookDelivery(
            {
              url,
              timeoutMs: config.timeoutMs,
              maxAttempts: config.maxAttempts,
              backoffMs: config.backoffMs,
              maxInFlight: config.maxInFlight,
              maxQueue: config.maxQueue,
              userAgent: 'toolgate-notify',
              fetch: outbound.fetch,
            },
            (o) => this.#sink(kind, o),
          ),
        );
      }
      return byKind;
    });
  }

  get enabled(): boolean {
    return this.#channels.length > 0;
  }

  approvalPending(approval: PendingApprovalFacts): void {
    this.#send('approval.pending', () => pendingApprovalMessage(approval, this.#config.publicUrl));
  }

  /** A four-eyes change (a gated tool version, or a grant request) waits for approvers. */
  changePending(c: ChangeFacts): void {
    this.#send(c.kind === 'grant' ? 'grant.pending' : 'change.pending', () =>
      changeMessage(c, this.#config.publicUrl),
    );
  }

  /** A security review waits for a reviewer. */
  reviewPending(r: ReviewFacts): void {
    this.#send('review.pending', () => reviewMessage(r, this.#config.publicUrl));
  }

  toolQuarantined(q: QuarantineFacts): void {
    this.#send('tool.quarantined', () => quarantineMessage(q, this.#config.publicUrl));
  }

  alertRaised(alert: AlertFacts): void {
    this.#send('alert.raised', () => alertMessage(alert, this.#config.publicUrl));
  }

  #send(kind: NotificationKind, build: () => NotificationPayload): void {
    if (this.#channels.length === 0) return;
    let payload: NotificationPayload;
    try {
      payload = build();
    } catch {
      this.#sink(kind, 'failed');
      return;
    }
    for (const channel of this.#channels) channel.get(kind)?.send(payload);
  }

  /** Resolves when every message accepted so far is delivered or given up. */
  async settled(): Promise<void> {
    await Promise.all(this.#channels.flatMap((c) => [...c.values()].map((d) => d.settled())));
  }

  async close(graceMs?: number): Promise<void> {
    await Promise.all(this.#channels.flatMap((c) => [...c.values()].map((d) => d.close(graceMs))));
  }
}
