/** @module RFC 8785 canonical JSON and its SHA-256, the identity of a definition. */
import { createHash } from 'node:crypto';
import canonicalizeImport from 'canonicalize';

// The package ships CJS typings with `export default`, which NodeNext sees as a namespace.
const canonicalize = canonicalizeImport as unknown as (value: unknown) => string | undefined;

/** Throws on values JSON cannot represent (undefined at the top, cycles); never returns partial. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('value has no JSON representation');
  return text;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function canonicalHash(value: unknown): string {
  return `sha256:${sha256Hex(canonicalJson(value))}`;
}
