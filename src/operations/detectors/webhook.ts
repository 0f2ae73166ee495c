/**
 * @module Alert webhooks: a JSON POST to the configured URL (a host of `allow_hosts`, under the
 * outbound rules when configured and at each delivery through the fetch given), with a bounded timeout and a bounded number in flight — the
 * notifications' webhook delivery with one attempt and no queue. Never awaited by a call; never
 * throws; every outcome is counted.
 */
import { WebhookDelivery } from '../notify/index.js';

export type WebhookOutcome = 'ok' | 'failed' | 'dropped';

export class WebhookSender {
  readonly #delivery: WebhookDelivery;

  constructor(
    options: { url: string; timeout_ms: number; max_in_flight: number; fetch: typeof fetch },
    onOutcome: (o: WebhookOutcome) => void,
  ) {
    this.#delivery = new WebhookDelivery(
      {
        url: options.url,
        timeoutMs: options.timeout_ms,
        maxAttempts: 1,
        backoffMs: 1,
        maxInFlight: options.max_in_flight,
        maxQueue: 0,
        userAgent: 'toolgate-detectors',
        fetch: options.fetch,
      },
      (o) => {
        if (o === 'delivered') onOutcome('ok');
        else if (o === 'rejected' || o === 'failed') onOutcome('failed');
        else if (o === 'dropped') onOutcome('dropped');
      },
    );
  }

  send(payload: unknown): void {
    this.#delivery.send(payload);
  }

  /** Resolves when every delivery started so far has settled. */
  settled(): Promise<void> {
    return this.#delivery.settled();
  }
}
