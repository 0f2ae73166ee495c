/**
 * @module Whether a backup is the one toolgate wrote (docs/operations.md, "Backups and restore").
 * A manifest's SHA-256 hashes catch damage, not an edit: whoever can write the backup can hash an
 * edited database again. A key the backup does not hold can tell: when the master key comes from
 * TOOLGATE_MASTER_KEY (kept in a secret store, not in the data folder), `backup` adds an
 * HMAC-SHA256 of the manifest under a key derived from it, and `restore`, given that key, refuses
 * a manifest whose MAC does not match, or that lost its MAC. A backup that holds its own master
 * key file cannot be authenticated by anything in it; restore says so.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson, type Problem, problem, ToolgateError } from '../core/index.js';
import { MasterKey } from '../domain/credentials/index.js';

/** The HKDF label of the manifest's MAC key: no other use of the master key shares it. */
const MANIFEST_MAC_LABEL = 'toolgate backup manifest v1';

export interface ManifestAuthentication {
  readonly method: 'hmac-sha256';
  /** The key it is under: the master key from TOOLGATE_MASTER_KEY, named by its id. */
  readonly key: 'TOOLGATE_MASTER_KEY';
  readonly key_id: string;
  readonly mac: string;
}

/** The master key from TOOLGATE_MASTER_KEY, which a backup never holds; null when unset. */
export function inlineMasterKey(env: NodeJS.ProcessEnv = process.env): MasterKey | null {
  const inline = env.TOOLGATE_MASTER_KEY ?? '';
  return inline === '' ? null : MasterKey.fromBase64(inline, 'TOOLGATE_MASTER_KEY');
}

/** What the MAC covers: the whole manifest (every file's hash with it) but its own field. */
function macOf(key: MasterKey, manifest: object): string {
  const { authentication: _, ...covered } = manifest as { authentication?: unknown };
  return createHmac('sha256', key.derive(MANIFEST_MAC_LABEL))
    .update(canonicalJson(covered))
    .digest('hex');
}

/** The authentication a manifest gets under `key`, the master key no file of the backup holds. */
export function authenticateManifest(key: MasterKey, manifest: object): ManifestAuthentication {
  return {
    method: 'hmac-sha256',
    key: 'TOOLGATE_MASTER_KEY',
    key_id: key.keyId,
    mac: macOf(key, manifest),
  };
}

export interface Authenticity {
  /** True when the MAC was checked under the key given; false for a backup holding its key. */
  readonly authenticated: boolean;
  readonly note: string;
}

/**
 * Checks a manifest's authenticity before anything is restored. `key`: the master key from
 * TOOLGATE_MASTER_KEY at restore, if set. `holdsMasterKey`: the backup has a master key file.
 * INPUT_INVALID (rule `backup.unauthentic`) when the backup was authenticated and the MAC does
 * not match, the key is missing, or a MAC that the key requires is gone.
 */
export function checkAuthenticity(
  manifest: { readonly authentication?: unknown },
  key: MasterKey | null,
  holdsMasterKey: boolean,
): Authenticity {
  const auth = manifest.authentication;
  if (auth === undefined) {
    if (key !== null) {
      // With the key in the environment a backup this gateway wrote carries its MAC: one without
      // it was written elsewhere, or had it removed together with an edit.
      throw unauthentic(
        '/authentication',
        holdsMasterKey
          ? 'is missing: this backup holds its own master key file and cannot be checked with TOOLGATE_MASTER_KEY; restore it without TOOLGATE_MASTER_KEY set if it comes from storage you trust'
          : 'is missing, though TOOLGATE_MASTER_KEY is set: a backup written with it carries a MAC under it',
      );
    }
    return {
      authenticated: false,
      note: 'not authenticated: the backup holds its own master key, so its hashes catch damage, not a deliberate edit; restore only a backup from storage you trust as much as the data folder',
    };
  }
  const a = auth as Partial<ManifestAuthentication> | null;
  if (
    typeof a !== 'object' ||
    a === null ||
    a.method !== 'hmac-sha256' ||
    typeof a.mac !== 'string' ||
    !/^[0-9a-f]{64}$/.test(a.mac)
  ) {
    throw unauthentic('/authentication', 'is not an HMAC-SHA256 entry');
  }
  if (holdsMasterKey) {
    throw unauthentic(
      '/files',
      'holds a master key file, which an authenticated backup never does',
    );
  }
  if (key === null) {
    throw unauthentic(
      '/authentication',
      `is under the master key ${String(a.key_id)} from TOOLGATE_MASTER_KEY: set it to restore this backup`,
    );
  }
  const expected = Buffer.from(macOf(key, manifest), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(a.mac, 'hex'))) {
    throw unauthentic(
      '/authentication',
      `does not match under the master key ${key.keyId}: the backup was changed after it was written, or is under another key (${String(a.key_id)})`,
    );
  }
  return { authenticated: true, note: `authenticated under the master key ${key.keyId}` };
}

function unauthentic(pointer: string, message: string): ToolgateError<'INPUT_INVALID'> {
  const problems: Problem[] = [problem(pointer, message, 'backup.unauthentic')];
  return new ToolgateError(
    'INPUT_INVALID',
    `the backup cannot be restored: ${pointer.slice(1)} ${message}; nothing was restored`,
    { problems },
  );
}
