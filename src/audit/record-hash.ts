/**
 * @module Which bytes of an audit record are hashed. Pure: node:crypto and canonicalize only.
 *
 * The leaf of record `seq` is SHA-256(0x00 || C) where C is the UTF-8 of the RFC 8785 canonical
 * JSON of an object holding every column of its `audit_log` row except `hash` itself, under the
 * column's name, with the value as stored (text → string, integer/real → number); columns that
 * are NULL are left out, so a nullable column added by a later migration leaves every earlier
 * hash valid. `seq` and `prev_hash` are columns and so are hashed: a record cannot be moved or
 * re-linked without its hash changing. `prev_hash` is the `hash` of record seq-1, and 64 zeros
 * for seq 1. Hashes are lowercase hex. Leaf index = seq - 1.
 */
import canonicalizeImport from 'canonicalize';
import { leafHash } from './merkle.js';

const canonicalize = canonicalizeImport as unknown as (value: unknown) => string | undefined;

export const GENESIS_PREV_HASH = '0'.repeat(64);

export type RecordColumns = Readonly<Record<string, string | number | null>>;

/**
 * RFC 8785 for the common case, a flat object of strings and finite numbers: members sorted by
 * UTF-16 code units (what Array.prototype.sort does), strings and numbers serialised as ECMAScript
 * JSON.stringify does (which is what RFC 8785 prescribes, and what canonicalize itself calls).
 * Anything else (nested values, non-finite numbers) takes canonicalize. A property test pins the
 * two to the same bytes. About 3x faster than canonicalize on an audit row, which verify feels.
 */
function flatCanonical(entries: [string, unknown][]): string | null {
  entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  let out = '{';
  for (let i = 0; i < entries.length; i++) {
    const [key, value] = entries[i] as [string, unknown];
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return null;
    } else if (typeof value !== 'string') {
      return null;
    }
    out += `${i === 0 ? '' : ','}${JSON.stringify(key)}:${JSON.stringify(value)}`;
  }
  return `${out}}`;
}

/** The canonical bytes C of a row (see the module comment). Throws on a value JSON cannot hold. */
export function recordBytes(row: Readonly<Record<string, unknown>>): Buffer {
  const entries: [string, unknown][] = [];
  for (const key in row) {
    const value = row[key];
    if (key === 'hash' || value === null || value === undefined) continue;
    entries.push([key, value]);
  }
  const text = flatCanonical(entries) ?? canonicalize(Object.fromEntries(entries));
  if (text === undefined) throw new TypeError('audit record has no JSON representation');
  return Buffer.from(text, 'utf8');
}

/** Canonicalize's bytes for the same row, never the fast path (for tests that pin the two). */
export function recordBytesReference(row: Readonly<Record<string, unknown>>): Buffer {
  // fromEntries defines own properties: a key such as __proto__ stays a member.
  const hashed = Object.fromEntries(
    Object.entries(row).filter(
      ([key, value]) => key !== 'hash' && value !== null && value !== undefined,
    ),
  );
  const text = canonicalize(hashed);
  if (text === undefined) throw new TypeError('audit record has no JSON representation');
  return Buffer.from(text, 'utf8');
}

/** The record's leaf hash, hex. */
export function recordHash(row: Readonly<Record<string, unknown>>): string {
  return leafHash(recordBytes(row)).toString('hex');
}
