/**
 * @module The master key that seals every secret (AES-256-GCM). It lives outside the database: in
 * TOOLGATE_MASTER_KEY (base64), in the file TOOLGATE_MASTER_KEY_FILE, or in `master.key` beside
 * the database (created 0600 on first use). Its key id (a hash prefix) is stored with each secret
 * so that a different key is reported as the wrong key rather than as tampering.
 */

import { createHash, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  foreignOwner,
  MAX_SECRET_FILE_BYTES,
  makePrivateDirs,
  readBoundedFile,
  regularFileStats,
  ToolgateError,
} from '../../core/index.js';

export const MASTER_KEY_BYTES = 32;
export const MASTER_KEY_FILE_NAME = 'master.key';

function invalid(reason: string, message: string): ToolgateError<'MASTER_KEY_INVALID'> {
  return new ToolgateError('MASTER_KEY_INVALID', message, { reason });
}

export class MasterKey {
  readonly #key: Buffer;
  /** 16 hex digits of SHA-256 over a label and the key: names the key, reveals nothing usable. */
  readonly keyId: string;

  private constructor(key: Buffer) {
    this.#key = key;
    this.keyId = createHash('sha256')
      .update('toolgate master key id v1\0')
      .update(key)
      .digest('hex')
      .slice(0, 16);
  }

  /** Never call from a front: the raw key is for the cipher only. */
  bytes(): Buffer {
    return this.#key;
  }

  /**
   * A separate 32-byte key for one purpose, derived with HKDF-SHA256 under `label` (its info): a
   * key derived for one label reveals neither the master key nor a key of another label.
   */
  derive(label: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.#key, Buffer.alloc(0), label, MASTER_KEY_BYTES));
  }

  static generate(): MasterKey {
    return new MasterKey(randomBytes(MASTER_KEY_BYTES));
  }

  /** `source` says where the text came from, for the error message; the text is never echoed. */
  static fromBase64(text: string, source: string): MasterKey {
    const trimmed = text.trim();
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) || trimmed.length % 4 !== 0) {
      throw invalid('not_base64', `the master key in ${source} is not base64 text`);
    }
    const key = Buffer.from(trimmed, 'base64');
    if (key.length !== MASTER_KEY_BYTES) {
      throw invalid(
        'wrong_length',
        `the master key in ${source} is ${key.length} bytes; it must be ${MASTER_KEY_BYTES} bytes (base64 of 32 random bytes, e.g. \`openssl rand -base64 32\`)`,
      );
    }
    return new MasterKey(key);
  }

  toBase64(): string {
    return this.#key.toString('base64');
  }

  // A key printed by accident (console.log, JSON.stringify, util.inspect) shows its id only.
  toJSON(): { keyId: string } {
    return { keyId: this.keyId };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `MasterKey(${this.keyId})`;
  }
}

function readKeyFile(path: string): MasterKey {
  const stats = regularFileStats(path, 'master key file');
  const foreign = foreignOwner(stats, `the master key file ${path}`);
  if (foreign !== null) throw invalid('file_permissions', foreign);
  if ((stats.mode & 0o077) !== 0) {
    throw invalid(
      'file_permissions',
      `the master key file ${path} is readable by group or others: chmod 600 ${path}`,
    );
  }
  return MasterKey.fromBase64(
    readBoundedFile(path, { option: 'master key file', maxBytes: MAX_SECRET_FILE_BYTES }),
    path,
  );
}

export interface MasterKeySource {
  /** Where `master.key` is kept when neither variable is set. */
  readonly dataDir: string;
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * The master key from TOOLGATE_MASTER_KEY, else TOOLGATE_MASTER_KEY_FILE (which must exist: a
 * mistyped path must not quietly start a new key), else `<dataDir>/master.key`, created on first
 * use. Never returns a key it could not read whole.
 */
export function loadMasterKey(source: MasterKeySource): MasterKey {
  const env = source.env ?? process.env;
  const inline = env.TOOLGATE_MASTER_KEY;
  if (inline !== undefined && inline !== '') {
    return MasterKey.fromBase64(inline, 'TOOLGATE_MASTER_KEY');
  }
  const configured = env.TOOLGATE_MASTER_KEY_FILE;
  if (configured !== undefined && configured !== '') {
    if (!existsSync(configured)) {
      throw invalid(
        'file_missing',
        `TOOLGATE_MASTER_KEY_FILE names ${configured}, which does not exist (create it with \`openssl rand -base64 32 > ${configured} && chmod 600 ${configured}\`)`,
      );
    }
    return readKeyFile(configured);
  }
  const path = join(source.dataDir, MASTER_KEY_FILE_NAME);
  if (existsSync(path)) return readKeyFile(path);
  makePrivateDirs(source.dataDir);
  const key = MasterKey.generate();
  try {
    // 'wx': if the server and the CLI create it at once, one wins and the other reads it.
    writeFileSync(path, `${key.toBase64()}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as { code?: string }).code !== 'EEXIST') throw err;
    return readKeyFile(path);
  }
  return key;
}

/**
 * For library use without a data folder: the key from TOOLGATE_MASTER_KEY or
 * TOOLGATE_MASTER_KEY_FILE, or a refusal saying how to configure one. Never invents a key.
 */
export function configuredMasterKey(env: NodeJS.ProcessEnv = process.env): MasterKey {
  if (!env.TOOLGATE_MASTER_KEY && !env.TOOLGATE_MASTER_KEY_FILE) {
    throw invalid(
      'not_configured',
      'no master key: set TOOLGATE_MASTER_KEY (base64 of 32 bytes) or TOOLGATE_MASTER_KEY_FILE, or pass masterKey to openToolgate',
    );
  }
  return loadMasterKey({ dataDir: '.', env });
}
