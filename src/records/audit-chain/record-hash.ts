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
import { sha256Hex } from '../../core/canonical-json.js';

const canonicalize = canonicalizeImport as unknown as (value: unknown) => string | undefined;

export const GENESIS_PREV_HASH = '0'.repeat(64);

export type RecordColumns = Readonly<Record<string, string | number | null>>;

/** The member order of one row shape (which columns are non-NULL), with the member names ready. */
interface Shape {
  readonly order: readonly number[];
  /** The member names in canonical (UTF-16 code unit) order. */
  readonly sorted: readonly string[];
  /**
   * True when JSON.stringify of an object built in `sorted` order writes its members in that
   * order: no name is an array index ("0", "17"), which objects always list first.
   */
  readonly plainOrder: boolean;
}
const shapes = new Map<string, Shape>();
const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;

/** The last few shapes seen, matched name by name before anything is joined or looked up. */
const recent: { keys: readonly string[]; shape: Shape }[] = [];
const RECENT = 6;

function shapeOf(keys: readonly string[]): Shape {
  for (const r of recent) {
    if (r.keys.length !== keys.length) continue;
    let same = true;
    for (let i = 0; i < keys.length; i++) {
      if (r.keys[i] !== keys[i]) {
        same = false;
        break;
      }
    }
    if (same) return r.shape;
  }
  const shape = lookupShape(keys);
  if (!keys.some((k) => k.includes('\u0000'))) {
    recent.unshift({ keys: [...keys], shape });
    if (recent.length > RECENT) recent.pop();
  }
  return shape;
}

function lookupShape(keys: readonly string[]): Shape {
  // Count, then the names: injective for names without NUL (a joined list of n such names holds
  // exactly n-1 NULs), and lists with NUL in a name are never stored.
  const id = `${keys.length}\u0000${keys.join('\u0000')}`;
  const known = shapes.get(id);
  if (known) return known;
  const order = keys
    .map((_, i) => i)
    .sort((x, y) => {
      const a = keys[x] as string;
      const b = keys[y] as string;
      return a < b ? -1 : a > b ? 1 : 0;
    });
  const sorted = order.map((i) => keys[i] as string);
  const plainOrder = !sorted.some(
    (k) => k === '__proto__' || (ARRAY_INDEX.test(k) && Number(k) < 4_294_967_295),
  );
  const shape = { order, sorted, plainOrder };
  // A key holding NUL could make two shapes share an id: such rows are never cached.
  if (shapes.size < 1024 && !keys.some((k) => k.includes('\u0000'))) shapes.set(id, shape);
  return shape;
}

/**
 * RFC 8785 for the common case, a flat object of strings and finite numbers: members sorted by
 * UTF-16 code units (what Array.prototype.sort does), strings and numbers serialised as ECMAScript
 * JSON.stringify does (which is what RFC 8785 prescribes, and what canonicalize itself calls).
 * The object is rebuilt in that order and handed to JSON.stringify whole, which keeps insertion
 * order for names that are not array indexes. Anything else (nested values, non-finite numbers,
 * index-like or `__proto__` names) takes canonicalize. A property test pins the two to the same
 * bytes. Rows share a handful of shapes, so each shape's order is sorted once.
 */
function recordText(row: Readonly<Record<string, unknown>>): string {
  const keys: string[] = [];
  const values: unknown[] = [];
  for (const key in row) {
    const value = row[key];
    if (key === 'hash' || value === null || value === undefined) continue;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return slow(row);
    } else if (typeof value !== 'string') {
      return slow(row);
    }
    keys.push(key);
    values.push(value);
  }
  const { order, sorted, plainOrder } = shapeOf(keys);
  if (!plainOrder) return slow(row);
  const ordered: Record<string, unknown> = {};
  for (let j = 0; j < order.length; j++) ordered[sorted[j] as string] = values[order[j] as number];
  return JSON.stringify(ordered);
}

function slow(row: Readonly<Record<string, unknown>>): string {
  // fromEntries defines own properties: a key such as __proto__ stays a member.
  const members = Object.entries(row).filter(
    ([key, value]) => key !== 'hash' && value !== null && value !== undefined,
  );
  const text = canonicalize(Object.fromEntries(members));
  if (text === undefined) throw new TypeError('audit record has no JSON representation');
  return text;
}

/** The canonical bytes C of a row (see the module comment). Throws on a value JSON cannot hold. */
export function recordBytes(row: Readonly<Record<string, unknown>>): Buffer {
  return Buffer.from(recordText(row), 'utf8');
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

/** The record's leaf hash, SHA-256(0x00 || C), hex: U+0000 is the one byte 0x00 in UTF-8. */
export function recordHash(row: Readonly<Record<string, unknown>>): string {
  return sha256Hex(`\u0000${recordText(row)}`);
}

/**
 * The columns of a raw read (values in `names` order), prepared once: the hashed ones (all but
 * `hash`) in canonical order, each with its `"name":` already written.
 */
export interface ColumnOrder {
  readonly indexes: readonly number[];
  readonly prefixes: readonly string[];
}

export function columnOrder(names: readonly string[]): ColumnOrder {
  const indexes = names
    .map((_, i) => i)
    .filter((i) => names[i] !== 'hash')
    .sort((x, y) => {
      const a = names[x] as string;
      const b = names[y] as string;
      return a < b ? -1 : a > b ? 1 : 0;
    });
  return { indexes, prefixes: indexes.map((i) => `${JSON.stringify(names[i])}:`) };
}

/**
 * recordHash of a row read as an array of values (`order` made from its column names), without
 * building an object: members written in canonical order, NULL columns left out, strings and
 * finite numbers as JSON.stringify writes them, which is what RFC 8785 prescribes (the same
 * bytes as recordText; a property test pins the two). Null when a value is of another kind
 * (a blob, a big integer, a non-finite number): the caller takes recordHash on the row instead.
 */
export function recordHashOfValues(order: ColumnOrder, values: readonly unknown[]): string | null {
  let text = '\u0000{';
  let first = true;
  const { indexes, prefixes } = order;
  for (let j = 0; j < indexes.length; j++) {
    const value = values[indexes[j] as number];
    if (value === null || value === undefined) continue;
    if (typeof value === 'string') {
      text += `${first ? '' : ','}${prefixes[j]}${JSON.stringify(value)}`;
    } else if (typeof value === 'number' && Number.isFinite(value)) {
      text += `${first ? '' : ','}${prefixes[j]}${JSON.stringify(value)}`;
    } else {
      return null;
    }
    first = false;
  }
  return sha256Hex(`${text}}`);
}
