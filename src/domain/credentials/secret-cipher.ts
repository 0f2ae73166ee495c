/**
 * @module Sealing one secret value: AES-256-GCM under the master key, a fresh random 96-bit nonce
 * per encryption, the 128-bit tag kept, and associated data that binds the ciphertext to its
 * tool, name, environment, version and key id — a row copied onto another secret, or an older
 * version restored over a newer one, fails to open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { ToolgateError } from '../../core/index.js';
import type { MasterKey } from './master-key.js';

const ALGORITHM = 'aes-256-gcm';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** What a ciphertext is bound to. */
export interface SecretBinding {
  readonly toolId: string;
  readonly name: string;
  readonly environment: string;
  readonly version: number;
}

export interface SealedSecret {
  readonly keyId: string;
  /** Base64. */
  readonly nonce: string;
  readonly ciphertext: string;
  readonly tag: string;
}

/** A JSON array: unambiguous where a separator-joined string would not be. */
function associatedData(binding: SecretBinding, keyId: string): Buffer {
  return Buffer.from(
    JSON.stringify([
      'toolgate-secret-v1',
      binding.toolId,
      binding.name,
      binding.environment,
      binding.version,
      keyId,
    ]),
    'utf8',
  );
}

export function sealSecret(key: MasterKey, binding: SecretBinding, value: string): SealedSecret {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv(ALGORITHM, key.bytes(), nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(associatedData(binding, key.keyId));
  const ciphertext = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return {
    keyId: key.keyId,
    nonce: nonce.toString('base64'),
    ciphertext: ciphertext.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
  };
}

/**
 * The plaintext, or a refusal: MASTER_KEY_INVALID when the row was sealed under another key,
 * SECRET_UNREADABLE when authentication fails. Fails closed; no error names a value.
 */
export function openSecret(key: MasterKey, binding: SecretBinding, sealed: SealedSecret): string {
  const ref = { toolId: binding.toolId, name: binding.name, environment: binding.environment };
  if (sealed.keyId !== key.keyId) {
    throw new ToolgateError(
      'MASTER_KEY_INVALID',
      `secret ${binding.name} of tool ${binding.toolId} (${binding.environment}) was sealed with master key ${sealed.keyId}, but the master key loaded is ${key.keyId}: start toolgate with the key the secrets were set with`,
      { reason: 'wrong_key', keyId: key.keyId, expectedKeyId: sealed.keyId },
    );
  }
  const unreadable = () =>
    new ToolgateError(
      'SECRET_UNREADABLE',
      `secret ${binding.name} of tool ${binding.toolId} (${binding.environment}) version ${binding.version} failed authentication: it was altered or copied from another secret; set it again`,
      { ...ref, version: binding.version },
    );
  const nonce = Buffer.from(sealed.nonce, 'base64');
  const tag = Buffer.from(sealed.tag, 'base64');
  if (nonce.length !== NONCE_BYTES || tag.length !== TAG_BYTES) throw unreadable();
  try {
    const decipher = createDecipheriv(ALGORITHM, key.bytes(), nonce, {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(associatedData(binding, sealed.keyId));
    decipher.setAuthTag(tag);
    const plain = Buffer.concat([
      decipher.update(Buffer.from(sealed.ciphertext, 'base64')),
      decipher.final(),
    ]);
    return plain.toString('utf8');
  } catch {
    throw unreadable();
  }
}
