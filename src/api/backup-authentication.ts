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
import { configuredMasterKey, loadMasterKey, MasterKey } from '../domain/credentials/index.js';

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

/**
 * The master key a restore checks a MAC with: TOOLGATE_MASTER_KEY, else the file
 * TOOLGATE_MASTER_KEY_FILE names (the same key kept in a file, as a systemd unit keeps it); null
 * when neither is set. A key that cannot be read refuses (MASTER_KEY_INVALID).
 */
export function restoreMasterKey(env: NodeJS.ProcessEnv = process.env): MasterKey | null {
  if (!env.TOOLGATE_MASTER_KEY && !env.TOOLGATE_MASTER_KEY_FILE) return null;
  return configuredMasterKey(env);
}

/**
 * The master key a gateway on `dataDir` uses without TOOLGATE_MASTER_KEY, its file made now if
 * there is none yet (a backup then holds it).
 */
export function ensureMasterKeyFile(dataDir: string): void {
  loadMasterKey({ dataDir });
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
 * Checks a manifest's authenticity before anything is restored. `key`: the master key at restore
 * (restoreMasterKey), if set; `inline`: it came from TOOLGATE_MASTER_KEY. `holdsMasterKey`: the
 * backup has a master key file. INPUT_INVALID (rule `backup.unauthentic`) when the backup was
 * authenticated and the MAC does not match or the key is missing, when it holds no master key
 * file and no MAC, or when it holds a key file where the inline key says it would carry a MAC.
 */
export function checkAuthenticity(
  manifest: { readonly authentication?: unknown },
  key: MasterKey | null,
  holdsMasterKey: boolean,
  inline = key !== null,
): Authenticity {
  const auth = manifest.authentication;
  if (auth === undefined) {
    if (!holdsMasterKey) {
      // Every backup holds its master key file or is authenticated under the key it left out
      // (TOOLGATE_MASTER_KEY): one with neither had its MAC removed, most likely with an edit
      // whose hashes were written again (attack round 22, Y8). Whatever the restore's environment.
      throw unauthentic(
        '/authentication',
        'is missing, and the backup holds no master key file: a backup written without its master key (TOOLGATE_MASTER_KEY) carries a MAC under it, so this one was changed after it was written',
      );
    }
    if (inline) {
      // With the key in the environment a backup this gateway wrote carries its MAC: one holding
      // a master key file of its own was written elsewhere, or replaced.
      throw unauthentic(
        '/authentication',
        'is missing: this backup holds its own master key file and cannot be checked with TOOLGATE_MASTER_KEY; restore it without TOOLGATE_MASTER_KEY set if it comes from storage you trust',
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
      `is under the master key ${String(a.key_id)}: set TOOLGATE_MASTER_KEY (or TOOLGATE_MASTER_KEY_FILE) to it to restore this backup`,
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
