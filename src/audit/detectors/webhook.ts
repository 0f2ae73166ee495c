/**
 * @module Alert webhooks: a JSON POST to the configured URL (loopback or an allow-listed https
 * host, checked when configured), with a bounded timeout and a bounded number in flight. Never
 * awaited by a call; never throws; every outcome is counted.
 */
export type WebhookOutcome = 'ok' | 'failed' | 'dropped';

export class WebhookSender {
  readonly #url: string;
  readonly #timeoutMs: number;
  readonly #maxInFlight: number;
  readonly #onOutcome: (o: WebhookOutcome) => void;
  readonly #inFlight = new Set<Promise<void>>();

  constructor(
    options: { url: string; timeout_ms: number; max_in_flight: number },
    onOutcome: (o: WebhookOutcome) => void,
  ) {
    this.#url = options.url;
    this.#timeoutMs = options.timeout_ms;
    this.#maxInFlight = options.max_in_flight;
    this.#onOutcome = onOutcome;
  }

  send(payload: unknown): void {
    if (this.#inFlight.size >= this.#maxInFlight) {
      this.#onOutcome('dropped');
      return;
    }
    const p = this.#post(payload).finally(() => this.#inFlight.delete(p));
    this.#inFlight.add(p);
  }

  async #post(payload: unknown): Promise<void> {
    try {
      const res = await fetch(this.#url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'toolgate-detectors' },
        body: JSON.stringify(payload),
        // A redirect could lead anywhere: the allow-list holds only for the configured URL.
        redirect: 'error',
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      // The body is not needed; release the connection.
      await res.body?.cancel();
      this.#onOutcome(res.ok ? 'ok' : 'failed');
    } catch {
      this.#onOutcome('failed');
    }
  }

  /** Resolves when every delivery started so far has settled. */
  async settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }
}
