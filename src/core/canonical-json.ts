/** @module RFC 8785 canonical JSON and its SHA-256, the identity of a definition. */
import * as crypto from 'node:crypto';
import canonicalizeImport from 'canonicalize';

// The package ships CJS typings with `export default`, which NodeNext sees as a namespace.
const canonicalize = canonicalizeImport as unknown as (value: unknown) => string | undefined;

/** Throws on values JSON cannot represent (undefined at the top, cycles); never returns partial. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('value has no JSON representation');
  return text;
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
