/**
 * @module Cursor pagination for every list: an opaque cursor names the last entry a
 * page showed by its sort key, which is unique (it ends with the entry's id), so the next page
 * starts strictly after it. Entries that arrive meanwhile never shift the walk: nothing already
 * listed is repeated and nothing that existed is skipped. A cursor is bound to its list; one of
 * another list, or a forged one, is INPUT_INVALID.
 *
 * A cursor is authenticated: `<payload><mac>`, both base64url (the MAC its last 43 characters, so
 * the cursor keeps the alphabet `[A-Za-z0-9_-]` the routes' schemas allow), the MAC an HMAC-SHA256 over a label and the
 * payload (which names the list) under the store's cursor key (`meta.cursor_key`, created once,
 * so every replica and the CLI on one database accept each other's cursors; open-store.ts loads
 * it). Verification is in constant time and precedes any parsing, so a cursor written by hand,
 * altered, truncated or taken from another list is refused before its key reaches a query.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ToolgateError } from './errors.js';
import { problem } from './problem.js';

export type PageKey = readonly (string | number)[];

export interface PageRequest {
  readonly cursor?: string | undefined;
  readonly limit?: number | undefined;
}

export interface Page<T> {
  readonly items: T[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  readonly next_cursor: string | null;
}

export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 500;

const CURSOR_MAC_LABEL = 'toolgate cursor v1\0';
const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** base64url of the 32 bytes of an HMAC-SHA256, unpadded. */
const MAC_CHARS = 43;

/**
 * The keys cursors are checked against, the signing key first. A process holds one per database
 * it opened (a test or an embedding may open several); until a store is opened, a random key of
 * this process signs, so cursors still cannot be forged.
 */
const cursorKeys: Buffer[] = [];

/** Sign new cursors with `key` (from the store); cursors signed with keys loaded before still verify. */
export function useCursorKey(key: Buffer): void {
  const known = cursorKeys.findIndex((k) => k.equals(key));
  if (known >= 0) cursorKeys.splice(known, 1);
  cursorKeys.unshift(Buffer.from(key));
}

function signingKey(): Buffer {
  if (cursorKeys.length === 0) cursorKeys.push(randomBytes(32));
  return cursorKeys[0] as Buffer;
}

function cursorMac(key: Buffer, payload: string): Buffer {
  return createHmac('sha256', key).update(CURSOR_MAC_LABEL).update(payload).digest();
}

export function encodeCursor(list: string, key: PageKey): string {
  const payload = Buffer.from(JSON.stringify({ l: list, k: key })).toString('base64url');
  return payload + cursorMac(signingKey(), payload).toString('base64url');
}

/** Whether `mac` is the MAC of `payload` under a known key; each comparison in constant time. */
function authentic(payload: string, mac: string): boolean {
  if (!BASE64URL.test(payload) || !BASE64URL.test(mac)) return false;
  const given = Buffer.from(mac, 'base64url');
  // Canonical encoding only: a MAC with altered padding bits is not the one we issued.
  if (given.toString('base64url') !== mac) return false;
  signingKey();
  let ok = false;
  for (const key of cursorKeys) {
    const expected = cursorMac(key, payload);
    if (given.length === expected.length && timingSafeEqual(given, expected)) ok = true;
  }
  return ok;
}

/** The key a cursor of this list carries; never returns for a cursor of another list. */
export function decodeCursor(list: string, cursor: string): PageKey {
  const bad = () =>
    new ToolgateError('INPUT_INVALID', 'the cursor is not one this list returned', {
      problems: [problem('/query/cursor', 'not a cursor of this list', 'page.cursor')],
    });
  const cut = cursor.length - MAC_CHARS;
  if (cut < 1 || !authentic(cursor.slice(0, cut), cursor.slice(cut))) throw bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor.slice(0, cut), 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  const value = parsed as { l?: unknown; k?: unknown } | null;
  if (
    typeof value !== 'object' ||
    value === null ||
    value.l !== list ||
    !Array.isArray(value.k) ||
    value.k.length === 0 ||
    !value.k.every((p) => typeof p === 'string' || typeof p === 'number')
  )
    throw bad();
  return value.k as PageKey;
}

/** The page size asked for, checked: 1 to MAX_PAGE_LIMIT, default DEFAULT_PAGE_LIMIT. */
export function pageLimit(limit: number | undefined): number {
  const n = limit ?? DEFAULT_PAGE_LIMIT;
  if (!Number.isInteger(n) || n < 1 || n > MAX_PAGE_LIMIT) {
    throw new ToolgateError('INPUT_INVALID', `limit must be 1–${MAX_PAGE_LIMIT}`, {
      problems: [
        problem('/query/limit', `must be an integer from 1 to ${MAX_PAGE_LIMIT}`, 'range'),
      ],
    });
  }
  return n;
}

export function compareKeys(a: PageKey, b: PageKey): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

/**
 * A page of a list held in memory (lists bounded by configuration: tools, agents, providers,
 * secrets, grants, changes). Sorted here by the key, so the service's own order does not matter.
 */
export function pageOf<T>(
  list: string,
  items: readonly T[],
  keyOf: (item: T) => PageKey,
  order: 'asc' | 'desc',
  request: PageRequest,
): Page<T> {
  const limit = pageLimit(request.limit);
  const sign = order === 'asc' ? 1 : -1;
  const after = request.cursor === undefined ? null : decodeCursor(list, request.cursor);
  const sorted = items
    .map((item) => ({ item, key: keyOf(item) }))
    .sort((a, b) => sign * compareKeys(a.key, b.key))
    .filter((e) => after === null || sign * compareKeys(e.key, after) > 0);
  const shown = sorted.slice(0, limit);
  const last = shown.at(-1);
  return {
    items: shown.map((e) => e.item),
    next_cursor: sorted.length > limit && last ? encodeCursor(list, last.key) : null,
  };
}

/** The page of a list read from the store with limit + 1 rows: the extra row says "more". */
export function pageFromRows<T>(
  list: string,
  rows: readonly T[],
  keyOf: (item: T) => PageKey,
  limit: number,
): Page<T> {
  const shown = rows.slice(0, limit);
  const last = shown.at(-1);
  return {
    items: [...shown],
    next_cursor: rows.length > limit && last ? encodeCursor(list, keyOf(last)) : null,
  };
}
