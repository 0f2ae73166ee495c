/**
 * @module Trace and span ids for the gate's spans (W3C Trace Context: 16 and 8 random bytes in
 * lower-case hex, never all zero), cut from a pool of random bytes refilled by the system's
 * generator when spent: one `randomFillSync` for some five hundred calls' ids instead of work per
 * id. The ids are random, not secret (they travel in `traceparent` headers to upstreams).
 */
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 8_192;

/** Hands out random ids; one per tracer. */
export class SpanIds {
  readonly #pool = Buffer.allocUnsafe(POOL_BYTES);
  #at = POOL_BYTES;

  /** 32 hex digits, not all zero. */
  traceId(): string {
    return this.#take(16);
  }

  /** 16 hex digits, not all zero. */
  spanId(): string {
    return this.#take(8);
  }

  #take(bytes: number): string {
    for (;;) {
      if (this.#at + bytes > POOL_BYTES) {
        randomFillSync(this.#pool);
        this.#at = 0;
      }
      const start = this.#at;
      this.#at += bytes;
      // An all-zero id is invalid (W3C Trace Context); with random bytes it is 2^-64 unlikely.
      for (let i = start; i < start + bytes; i++) {
        if (this.#pool[i] !== 0) return this.#pool.toString('hex', start, start + bytes);
      }
    }
  }
}
