/**
 * @module Which failures the client SDK retries, and how often: bounded, only where the gateway
 * was not reached or said it was briefly unable (connection refused or reset, a timeout, 502, 503,
 * 504, or 429 with a short Retry-After), never a decision of the gate. A REST call carries the
 * same idempotency key on every attempt, so a retry after a lost answer never runs it twice.
 */
import { GatewayUnavailableError, type UnavailableCause } from './client-errors.js';

export interface RetryPolicy {
  /** Attempts in all, the first included; default 4. */
  readonly attempts?: number;
  /** The first backoff; it doubles per attempt up to `maxDelayMs`. Default 100 ms. */
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
  /** A 429 or 503 whose Retry-After is longer than this is not waited for; default 5000 ms. */
  readonly maxRetryAfterMs?: number;
}

/** One attempt's outcome, as the retry loop sees it. */
export type Attempt<T> =
  | { readonly kind: 'done'; readonly value: T }
  | {
      readonly kind: 'retry';
      readonly cause: UnavailableCause;
      /** The gateway asked for this wait (Retry-After), in ms. */
      readonly retryAfterMs: number | null;
      /** The request may have reached the gateway (it was sent and no answer came back). */
      readonly mayHaveRun: boolean;
      /** What to answer when retrying is not allowed (a too long Retry-After, the last attempt). */
      readonly final?: T;
      /** Not to be sent again (it may have run and carries no idempotency key): fail closed now. */
      readonly stop?: boolean;
    };

const DEFAULTS = { attempts: 4, baseDelayMs: 100, maxDelayMs: 2000, maxRetryAfterMs: 5000 };

/** Connection-level codes: the gateway is away, restarting, or dropped the connection. */
export function networkCause(err: unknown): UnavailableCause {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
  const code =
    typeof cause?.code === 'string'
      ? cause.code
      : err instanceof Error && err.name === 'TimeoutError'
        ? 'ETIMEDOUT'
        : 'ENETWORK';
  const message =
    typeof cause?.message === 'string' ? cause.message : err instanceof Error ? err.message : '';
  return { kind: 'network', code, message };
}

/** A connection refused never reached the gateway: nothing can have run. */
export function neverSent(cause: UnavailableCause): boolean {
  return cause.kind === 'network' && (cause.code === 'ECONNREFUSED' || cause.code === 'ENOTFOUND');
}

/** RFC 9110 §10.2.3: delay-seconds or an HTTP date. */
export function retryAfterMs(header: string | null, now: number): number | null {
  if (header === null) return null;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Waits `ms`, or rejects with the signal's reason once it aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs `attempt` until it is done or the policy is spent. Never retries a `done` outcome (a gate
 * decision, a refusal); throws `GatewayUnavailableError` when every attempt found the gateway
 * away, unless the last one carried a `final` answer (a 429 refusal, say), which is returned.
 */
export async function withRetries<T>(
  policy: RetryPolicy | undefined,
  idempotencyKey: string | null,
  attempt: (n: number) => Promise<Attempt<T>>,
  signal?: AbortSignal,
): Promise<T> {
  const p = { ...DEFAULTS, ...policy };
  let mayHaveRun = false;
  for (let n = 1; ; n++) {
    const outcome = await attempt(n);
    if (outcome.kind === 'done') return outcome.value;
    mayHaveRun ||= outcome.mayHaveRun;
    const backoff = Math.min(p.maxDelayMs, p.baseDelayMs * 2 ** (n - 1));
    const wait = outcome.retryAfterMs ?? backoff;
    const tooLong = outcome.retryAfterMs !== null && outcome.retryAfterMs > p.maxRetryAfterMs;
    if (n >= p.attempts || tooLong || outcome.stop === true) {
      if (outcome.final !== undefined) return outcome.final;
      throw new GatewayUnavailableError(
        `the gateway is unavailable (${describe(outcome.cause)}) after ${n} attempt${n === 1 ? '' : 's'}; nothing ran on this side`,
        n,
        outcome.cause,
        idempotencyKey,
        mayHaveRun,
      );
    }
    await sleep(wait, signal);
  }
}

function describe(cause: UnavailableCause): string {
  return cause.kind === 'network'
    ? cause.code
    : `HTTP ${cause.status}${cause.code ? ` ${cause.code}` : ''}`;
}
