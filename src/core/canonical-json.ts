/**
 * @module RFC 8785 canonical JSON and its SHA-256, the identity of a definition. The text is the
 * `canonicalize` package's, byte for byte (a property test pins the two together): members sorted
 * by UTF-16 code units, numbers and strings as JSON.stringify writes them, `toJSON` honoured,
 * undefined and symbol members left out (null in arrays); NaN, infinities, lone surrogates and
 * cycles refused. Ours walks the value with native checks (String.prototype.isWellFormed) where
 * the package loops over every character of every string in JavaScript: it is on the path of
 * every registration, approval token and policy request.
 */
import * as crypto from 'node:crypto';

/** Throws on values JSON cannot represent (undefined at the top, cycles); never returns partial. */
export function canonicalJson(value: unknown): string {
  const text = canonical(value, new Set());
  if (text === undefined) throw new TypeError('value has no JSON representation');
  return text;
}

/** No lone surrogate (ES2024's String.prototype.isWellFormed, native in every Node we run on). */
const wellFormed = (s: string): boolean =>
  (s as unknown as { isWellFormed(): boolean }).isWellFormed();

function primitive(value: unknown): string | undefined {
  if (typeof value === 'number') {
    if (Number.isNaN(value)) throw new Error('NaN is not allowed');
    if (!Number.isFinite(value)) throw new Error('Infinity is not allowed');
  } else if (typeof value === 'string' && !wellFormed(value)) {
    throw new Error('Lone surrogate is not allowed');
  }
  return JSON.stringify(value);
}

function canonical(value: unknown, seen: Set<object>): string | undefined {
  if (value === null || typeof value !== 'object') return primitive(value);
  if (seen.has(value)) throw new Error('Circular reference detected');
  const withToJson = value as { toJSON?: unknown };
  if (typeof withToJson.toJSON === 'function') {
    seen.add(value);
    const result = canonical((withToJson.toJSON as () => unknown)(), seen);
    seen.delete(value);
    return result;
  }
  seen.add(value);
  let result: string;
  if (Array.isArray(value)) {
    result = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) result += ',';
      // A hole, or an item with no JSON text (a function), is written as nothing, as the
      // package's map-then-join writes it.
      if (!(i in value)) continue;
      const item: unknown = value[i];
      result += canonical(item === undefined || typeof item === 'symbol' ? null : item, seen) ?? '';
    }
    result += ']';
  } else {
    const record = value as Record<string, unknown>;
    result = '{';
    let first = true;
    for (const key of Object.keys(record).sort()) {
      const member = record[key];
      if (member === undefined || typeof member === 'symbol') continue;
      if (!first) result += ',';
      first = false;
      // As the package writes it: a member whose value has no JSON text (a function) reads
      // `undefined`, which no JSON parser takes, so such a value never passes unnoticed.
      result += `${primitive(key)}:${canonical(member, seen)}`;
    }
    result += '}';
  }
  seen.delete(value);
  return result;
}

type OneShotHash = (algorithm: string, data: string, encoding: 'hex') => string;
/** crypto.hash (Node ≥ 20.12) skips the Hash object a digest otherwise costs; same bytes. */
const oneShot = (crypto as unknown as { hash?: OneShotHash }).hash;

export function sha256Hex(text: string): string {
  if (oneShot) return oneShot('sha256', text, 'hex');
  return crypto.createHash('sha256').update(text, 'utf8').digest('hex');
}

export function canonicalHash(value: unknown): string {
  return `sha256:${sha256Hex(canonicalJson(value))}`;
}
