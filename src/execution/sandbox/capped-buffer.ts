/** @module A byte buffer that keeps at most its cap and remembers that it had to cut. */
import { TRUNCATION_MARK } from './run-outcome.js';

export class CappedBuffer {
  readonly #cap: number;
  readonly #chunks: Buffer[] = [];
  #size = 0;
  #truncated = false;

  constructor(capBytes: number) {
    this.#cap = capBytes;
  }

  /** Keeps what fits; returns false once anything had to be dropped (never grows past the cap). */
  push(chunk: Buffer): boolean {
    if (this.#truncated) return false;
    const room = this.#cap - this.#size;
    if (chunk.length <= room) {
      this.#chunks.push(chunk);
      this.#size += chunk.length;
      return true;
    }
    if (room > 0) this.#chunks.push(chunk.subarray(0, room));
    this.#size = this.#cap;
    this.#truncated = true;
    return false;
  }

  get truncated(): boolean {
    return this.#truncated;
  }

  text(): string {
    const text = Buffer.concat(this.#chunks).toString('utf8');
    return this.#truncated ? text + TRUNCATION_MARK : text;
  }
}
