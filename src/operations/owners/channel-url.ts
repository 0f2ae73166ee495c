/**
 * @module A channel's URL as a credential (docs/operations.md, "Owner notices"): sealed with the
 * master key (the secrets store's cipher, bound to the channel's id and a version, so a row copied
 * onto another channel fails to open), found again by a keyed hash (HMAC-SHA256 under a key
 * derived for this purpose alone), and shown as its origin only. Nothing here puts the URL, or a
 * piece of it beyond its origin, into a message.
 */
import { createHmac } from 'node:crypto';
import type { Transaction } from 'kysely';
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

/** The keyed hash of a URL: equal URLs, equal keys; nothing to guess a URL from. */
export function urlKey(key: MasterKey, url: string): string {
  return createHmac('sha256', key.derive(URL_KEY_LABEL)).update(url, 'utf8').digest('hex');
}

/** The columns of channel `channelId` holding `url`, version `version` of its seal. */
export function storedUrl(key: MasterKey, channelId: string, url: string, version = 1): StoredUrl {
  const sealed = sealSecret(key, bindingOf(channelId, version), url);
  const row: SealedRow = { version, ...sealed };
  return {
    url_sealed: JSON.stringify(row),
    url_key: urlKey(key, url),
    url_hint: urlHint(url),
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
 * Seals every channel URL still stored in plain (rows from before migration 0042), inside the
 * caller's transaction; called by every channel write, so the first change after an upgrade
 * leaves no URL in plain.
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
}
