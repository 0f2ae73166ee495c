/**
 * @module The leaf input of a record read as an array of values, written as bytes into one
 * reused buffer (docs/architecture.md C12, "Verify in parallel"). Pure: node:crypto only. The
 * bytes are exactly those recordHashOfValues hashes (0x00, then the RFC 8785 canonical JSON of
 * the row's non-NULL columns but `hash`, UTF-8): member names in canonical order, each `"name":`
 * prepared once; a string of printable ASCII without `"` or `\` copied byte for byte (JSON.stringify
 * writes it the same); any other string written as JSON.stringify writes it, then UTF-8; numbers
 * as JSON.stringify writes them. A property test pins the bytes to recordBytes. What this saves
 * over building a string per record: the member texts, the joined string and its UTF-8 copy.
 */
import * as crypto from 'node:crypto';
import type { ColumnOrder } from './record-hash.js';

type OneShot = (algorithm: string, data: Uint8Array, encoding: 'hex' | 'latin1') => string;
/** crypto.hash (Node ≥ 20.12): one call, no Hash object; the same digest. */
const oneShot = (crypto as unknown as { hash?: OneShot }).hash;

/** SHA-256 of `bytes` in lowercase hex. */
export function sha256HexOf(bytes: Uint8Array): string {
  if (oneShot) return oneShot('sha256', bytes, 'hex');
  return crypto.createHash('sha256').update(bytes).digest('hex');
}

/**
 * SHA-256 of `bytes` written into `out` at `at` (32 bytes). The digest comes back as a latin1
 * string (one character a byte), which costs less than a Buffer per digest.
 */
export function sha256Into(bytes: Uint8Array, out: Buffer, at: number): void {
  if (oneShot) {
    out.write(oneShot('sha256', bytes, 'latin1'), at, 32, 'latin1');
    return;
  }
  crypto.createHash('sha256').update(bytes).digest().copy(out, at);
}

/** A column order with each member's `"name":` as bytes. */
export interface ByteOrder {
  readonly indexes: readonly number[];
  readonly names: readonly Uint8Array[];
}

export function byteOrder(order: ColumnOrder): ByteOrder {
  return {
    indexes: order.indexes,
    names: order.prefixes.map((p) => new Uint8Array(Buffer.from(p, 'utf8'))),
  };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;

/** Writes the leaf input of rows into one buffer, grown when a row needs more. */
export class RecordEncoder {
  #out: Buffer = Buffer.allocUnsafe(1 << 16);

  /** The buffer the last encode wrote into (valid until the next encode). */
  get bytes(): Buffer {
    return this.#out;
  }

  #room(used: number, more: number): Buffer {
    if (used + more <= this.#out.length) return this.#out;
    const grown = Buffer.allocUnsafe(Math.max(this.#out.length * 2, used + more));
    this.#out.copy(grown, 0, 0, used);
    this.#out = grown;
    return grown;
  }

  /**
   * Writes 0x00 || canonical JSON of `values` and answers its length; -1 when a value is of a
   * kind recordHashOfValues does not take (a blob, a big integer, a non-finite number).
   */
  encode(order: ByteOrder, values: readonly unknown[]): number {
    const { indexes, names } = order;
    let out = this.#room(0, 2);
    out[0] = 0;
    out[1] = 0x7b; // {
    let p = 2;
    let first = true;
    for (let j = 0; j < indexes.length; j++) {
      const value = values[indexes[j] as number];
      if (value === null || value === undefined) continue;
      const name = names[j] as Uint8Array;
      let text: string;
      if (typeof value === 'string') {
        text = value;
      } else if (typeof value === 'number' && Number.isFinite(value)) {
        text = JSON.stringify(value);
      } else {
        return -1;
      }
      // JSON.stringify writes a UTF-16 unit as at most 6 bytes (\u001f), a string adds 2 quotes.
      out = this.#room(p, name.length + 6 * text.length + 8);
      if (!first) out[p++] = COMMA;
      first = false;
      out.set(name, p);
      p += name.length;
      p = typeof value === 'string' ? writeString(out, p, text) : writeAscii(out, p, text);
    }
    out = this.#room(p, 1);
    out[p++] = 0x7d; // }
    return p;
  }
}

/** A number as JSON.stringify wrote it: ASCII only. */
function writeAscii(out: Buffer, p: number, text: string): number {
  for (let k = 0; k < text.length; k++) out[p++] = text.charCodeAt(k);
  return p;
}

/** A JSON string: copied when it is printable ASCII with nothing to escape, else as JSON.stringify. */
function writeString(out: Buffer, start: number, text: string): number {
  let p = start;
  out[p++] = QUOTE;
  for (let k = 0; k < text.length; k++) {
    const c = text.charCodeAt(k);
    if (c < 0x20 || c > 0x7e || c === QUOTE || c === BACKSLASH) {
      // Escapes, non-ASCII, lone surrogates: JSON.stringify's text (well-formed), then UTF-8.
      return start + out.write(JSON.stringify(text), start, 'utf8');
    }
    out[p++] = c;
  }
  out[p++] = QUOTE;
  return p;
}
