/**
 * @module A channel's URL as a credential (docs/operations.md, "Owner notices"): kept in the form
 * it is sent in (`canonicalUrl`), sealed with the master key (the secrets store's cipher, bound to
 * the channel's id and a version, so a row copied onto another channel fails to open), found again
 * by a keyed hash (HMAC-SHA256 under a key derived for this purpose alone) of the form URLs are
 * compared in (`comparedUrl`), and shown as its origin only. Nothing here puts the URL, or a piece
 * of it beyond its origin, into a message.
 */
import { createHmac } from 'node:crypto';
import type { Transaction } from 'kysely';
import { isToolgateError } from '../../core/index.js';
import {
  type MasterKey,
  openSecret,
  type SealedSecret,
  type SecretBinding,
  sealSecret,
} from '../../domain/credentials/index.js';
import type { Database } from '../../records/store/index.js';

/** The master key's purpose label for channel URL hashes. */
const URL_KEY_LABEL = 'toolgate owner-channel url key v1';
/**
 * Marks a key taken over `comparedUrl` (attack round 22, Y12). A key without it is an earlier
 * version's, over the text as given: keyed again by the next channel write (`sealLegacyIn`).
 */
const KEY_FORM = 'c1.';

/** A URL as stored: sealed, its keyed hash and its origin. */
export interface StoredUrl {
  readonly url_sealed: string;
  readonly url_key: string;
  readonly url_hint: string;
  readonly url: '';
}

interface SealedRow extends SealedSecret {
  readonly version: number;
}

function bindingOf(channelId: string, version: number): SecretBinding {
  return { toolId: '@owner-channel', name: channelId, environment: 'webhook', version };
}

/** `https://host/…`: all anyone is shown of a URL (a webhook's path is its secret). */
export function urlHint(url: string): string {
  try {
    return `${new URL(url).origin}/…`;
  } catch {
    return '(invalid)';
  }
}

/**
 * A channel URL as it is kept and sent: parsed as the WHATWG URL Standard parses it (as `fetch`
 * does before sending) — surrounding spaces and control characters and any tab or newline inside
 * dropped, scheme and host lower-cased, an IPv4 host in any spelling (`0x7f000001`, `127.1`)
 * written as a dotted quad, a default port dropped, `.` and `..` segments resolved — and without
 * its fragment, which is never sent. The text as given when it is no URL (refused before it is
 * stored).
 */
export function canonicalUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.hash = '';
    return parsed.href;
  } catch {
    return url;
  }
}

/** `%xx` of a character RFC 3986 calls unreserved: the same URL as the character itself. */
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/**
 * The form channel URLs are compared in (one URL per team): `canonicalUrl`, its path and query
 * with percent-encoding normalised as RFC 3986 §6.2.2 says — hex digits upper-cased, an encoded
 * unreserved character decoded — so `%48OOK` and `HOOK` are one URL. Only compared, never sent:
 * the URL is sent as `canonicalUrl` keeps it.
 */
export function comparedUrl(url: string): string {
  const canonical = canonicalUrl(url);
  let parsed: URL;
  try {
    parsed = new URL(canonical);
  } catch {
    return canonical;
  }
  const normal = (part: string) =>
    part.replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => {
      const char = String.fromCharCode(Number.parseInt(hex, 16));
      return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
    });
  return `${parsed.origin}${normal(parsed.pathname)}${normal(parsed.search)}`;
}

/** The keyed hash of a URL: equal URLs (`comparedUrl`), equal keys; nothing to guess a URL from. */
export function urlKey(key: MasterKey, url: string): string {
  const mac = createHmac('sha256', key.derive(URL_KEY_LABEL)).update(comparedUrl(url), 'utf8');
  return `${KEY_FORM}${mac.digest('hex')}`;
}

/**
 * The columns of channel `channelId` holding `url` (kept as `canonicalUrl` says), version
 * `version` of its seal.
 */
export function storedUrl(key: MasterKey, channelId: string, url: string, version = 1): StoredUrl {
  const kept = canonicalUrl(url);
  const sealed = sealSecret(key, bindingOf(channelId, version), kept);
  const row: SealedRow = { version, ...sealed };
  return {
    url_sealed: JSON.stringify(row),
    url_key: urlKey(key, kept),
    url_hint: urlHint(kept),
    url: '',
  };
}

/** The version of a stored seal (0 for a row from before sealing). */
export function sealVersion(urlSealed: string | null): number {
  return urlSealed === null ? 0 : (JSON.parse(urlSealed) as SealedRow).version;
}

/** The URL of a channel row: opened from its seal, or a row from before sealing as it is. */
export function openUrl(
  key: () => MasterKey,
  row: { readonly id: string; readonly url: string; readonly url_sealed: string | null },
): string {
  if (row.url_sealed === null) return row.url;
  const sealed = JSON.parse(row.url_sealed) as SealedRow;
  return openSecret(key(), bindingOf(row.id, sealed.version), sealed);
}

/**
 * The URL of a channel row, or null when its seal does not open: tampered with, or copied from
 * another channel (the seal is bound to its channel). A master key that cannot be loaded at all is
 * no channel's fault: thrown.
 */
export function openUrlOrNull(
  key: () => MasterKey,
  row: { readonly id: string; readonly url: string; readonly url_sealed: string | null },
): string | null {
  try {
    return openUrl(key, row);
  } catch (err) {
    if (isToolgateError(err) && err.code !== 'SECRET_UNREADABLE') throw err;
    return null;
  }
}

/**
 * Brings every channel row to the current form, inside the caller's transaction; called by every
 * channel write, so the first change after an upgrade finishes it. A URL still stored in plain
 * (rows from before migration 0042) is sealed; a key over the text as given (before `KEY_FORM`)
 * is taken again over the compared form — unless the row does not open (it stays as it is, and
 * is reported where it is used) or another channel of its team holds that key already (two
 * spellings of one URL added before: both stay, keyed as before; remove one by hand).
 */
export async function sealLegacyIn(trx: Transaction<Database>, key: MasterKey): Promise<void> {
  const rows = await trx
    .selectFrom('owner_channels')
    .select(['id', 'url'])
    .where('url_sealed', 'is', null)
    .execute();
  for (const row of rows) {
    await trx
      .updateTable('owner_channels')
      .set(storedUrl(key, row.id, row.url))
      .where('id', '=', row.id)
      .execute();
  }
  const stale = await trx
    .selectFrom('owner_channels')
    .select(['id', 'team', 'url', 'url_sealed'])
    .where('url_sealed', 'is not', null)
    .where((eb) => eb.or([eb('url_key', 'is', null), eb('url_key', 'not like', `${KEY_FORM}%`)]))
    .execute();
  for (const row of stale) {
    const url = openUrlOrNull(() => key, row);
    if (url === null) continue;
    const fresh = urlKey(key, url);
    const taken = await trx
      .selectFrom('owner_channels')
      .select('id')
      .where('team', '=', row.team)
      .where('url_key', '=', fresh)
      .executeTakeFirst();
    if (taken) continue;
    await trx
      .updateTable('owner_channels')
      .set({ url_key: fresh })
      .where('id', '=', row.id)
      .execute();
  }
}
