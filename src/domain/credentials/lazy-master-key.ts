/**
 * @module The gateway's one master key, loaded once on first use: it seals tool secrets and
 * operators' second factors, and the audit log's keyed-hash key is derived from it (never stored).
 */
import { randomBytes } from 'node:crypto';
import { ToolgateError } from '../../core/index.js';
import { PSEUDONYM_KEY_LABEL } from '../../records/audit/index.js';
import { configuredMasterKey, type MasterKey } from './master-key.js';

/**
 * The given key (or the function making it), else TOOLGATE_MASTER_KEY or
 * TOOLGATE_MASTER_KEY_FILE; loaded on the first call, the same key on every later one.
 */
export function lazyMasterKey(source?: MasterKey | (() => MasterKey)): () => MasterKey {
  const from = source ?? (() => configuredMasterKey());
  let key: MasterKey | null = null;
  return () => {
    key ??= typeof from === 'function' ? from() : from;
    return key;
  };
}

/**
 * The key of the audit log's keyed hashes, derived from the master key. Without a configured
 * master key (library use, `given` false) it is this process's own, so hashes match within it
 * only; a configured key that cannot be read fails the record, never writes it unmasked.
 */
export function pseudonymKey(load: () => MasterKey, given: boolean): () => Buffer {
  return () => {
    try {
      return load().derive(PSEUDONYM_KEY_LABEL);
    } catch (err) {
      const notConfigured =
        !given &&
        err instanceof ToolgateError &&
        (err.details as { reason?: unknown }).reason === 'not_configured';
      if (notConfigured) return randomBytes(32);
      throw err;
    }
  };
}
