/**
 * @module Local operators' passwords: Argon2id (node:crypto, RFC 9106) at OWASP's recommended cost
 * (19 MiB, 2 passes, 1 lane) with a fresh 16-byte salt per hash, stored in the PHC string format
 * with its parameters (`$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`), so the cost can be raised
 * later without breaking old hashes. Hashes of earlier versions (`scrypt$N=…,r=…,p=…$<salt>$<key>`)
 * still verify; needsRehash says when a sign-in should store a new one. Compared in constant time.
 * A password is refused by length only: length is what makes guessing expensive, composition
 * rules add little.
 */
import { argon2, randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import { problem, ToolgateError } from '../../core/index.js';

export const MIN_PASSWORD_LENGTH = 12;
/** Long enough for any passphrase; bounded so nobody makes the gateway hash megabytes. */
export const MAX_PASSWORD_LENGTH = 1024;

/** The cost of an Argon2id hash: memory in KiB, passes over it, lanes. */
export interface Argon2Params {
  readonly memoryKiB: number;
  readonly passes: number;
  readonly parallelism: number;
}

/** OWASP's Password Storage Cheat Sheet, first Argon2id line: m=19456 (19 MiB), t=2, p=1. */
export const DEFAULT_ARGON2: Argon2Params = { memoryKiB: 19_456, passes: 2, parallelism: 1 };
const KEY_BYTES = 32;
const SALT_BYTES = 16;
/** Argon2 version 1.3, the one node:crypto computes. */
const ARGON2_VERSION = 19;
/**
 * What a stored hash may ask for at most: a row written by someone else is still bounded
 * (256 MiB, 16 passes, 16 lanes).
 */
const MAX_ARGON2: Argon2Params = { memoryKiB: 262_144, passes: 16, parallelism: 16 };

/** scrypt's cost, as hashes before Argon2id stored it. */
interface ScryptParams {
  readonly N: number;
  readonly r: number;
  readonly p: number;
}
/** A stored scrypt hash can ask for at most this much. */
const MAX_N = 2 ** 20;

type ParsedHash =
  | {
      readonly kind: 'argon2id';
      readonly params: Argon2Params;
      readonly salt: Buffer;
      readonly key: Buffer;
    }
  | {
      readonly kind: 'scrypt';
      readonly params: ScryptParams;
      readonly salt: Buffer;
      readonly key: Buffer;
    };

function deriveArgon2(password: string, salt: Buffer, params: Argon2Params): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    argon2(
      'argon2id',
      {
        message: password.normalize('NFC'),
        nonce: salt,
        memory: params.memoryKiB,
        passes: params.passes,
        parallelism: params.parallelism,
        tagLength: KEY_BYTES,
      },
      (err, key) => (err ? reject(err) : resolve(key)),
    ),
  );
}

function deriveScrypt(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  const options: ScryptOptions = {
    N: params.N,
    r: params.r,
    p: params.p,
    maxmem: 256 * params.N * params.r + 1024 * 1024,
  };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

/** Refuses a password that is too short (or absurdly long); never says anything about it but its length. */
export function checkPasswordStrength(password: unknown): asserts password is string {
  const length = typeof password === 'string' ? [...password].length : 0;
  if (typeof password !== 'string' || length < MIN_PASSWORD_LENGTH) {
    throw new ToolgateError(
      'INPUT_INVALID',
      `a password needs at least ${MIN_PASSWORD_LENGTH} characters`,
      {
        problems: [problem('/password', `at least ${MIN_PASSWORD_LENGTH} characters`, 'minLength')],
      },
    );
  }
  if (length > MAX_PASSWORD_LENGTH) {
    throw new ToolgateError(
      'INPUT_INVALID',
      `a password has at most ${MAX_PASSWORD_LENGTH} characters`,
      {
        problems: [problem('/password', `at most ${MAX_PASSWORD_LENGTH} characters`, 'maxLength')],
      },
    );
  }
}

/** A new Argon2id hash of `password` at `params` (tests lower the cost; the default is OWASP's). */
export async function hashPassword(
  password: string,
  params: Argon2Params = DEFAULT_ARGON2,
): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await deriveArgon2(password, salt, params);
  return `$argon2id$v=${ARGON2_VERSION}$m=${params.memoryKiB},t=${params.passes},p=${params.parallelism}$${b64(salt)}$${b64(key)}`;
}

/** PHC strings use standard base64 without padding. */
function b64(bytes: Buffer): string {
  return bytes.toString('base64').replace(/=+$/, '');
}

function unb64(text: string): Buffer | null {
  return /^[A-Za-z0-9+/]+$/.test(text) ? Buffer.from(text, 'base64') : null;
}

function parseArgon2(parts: readonly string[]): ParsedHash | null {
  // ['', 'argon2id', 'v=19', 'm=…,t=…,p=…', salt, key]
  if (parts.length !== 6 || parts[0] !== '' || parts[1] !== 'argon2id') return null;
  if (parts[2] !== `v=${ARGON2_VERSION}`) return null;
  const m = /^m=(\d{1,7}),t=(\d{1,2}),p=(\d{1,2})$/.exec(parts[3] ?? '');
  if (!m) return null;
  const params = { memoryKiB: Number(m[1]), passes: Number(m[2]), parallelism: Number(m[3]) };
  if (
    params.parallelism < 1 ||
    params.parallelism > MAX_ARGON2.parallelism ||
    params.passes < 1 ||
    params.passes > MAX_ARGON2.passes ||
    params.memoryKiB < 8 * params.parallelism ||
    params.memoryKiB > MAX_ARGON2.memoryKiB
  ) {
    return null;
  }
  const salt = unb64(parts[4] ?? '');
  const key = unb64(parts[5] ?? '');
  if (salt === null || key === null || salt.length < SALT_BYTES || key.length !== KEY_BYTES) {
    return null;
  }
  return { kind: 'argon2id', params, salt, key };
}

function parseScrypt(parts: readonly string[]): ParsedHash | null {
  if (parts.length !== 4 || parts[0] !== 'scrypt') return null;
  const m = /^N=(\d{1,8}),r=(\d{1,3}),p=(\d{1,3})$/.exec(parts[1] ?? '');
  if (!m) return null;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // N must be a power of two above 1 (scrypt's own rule); the bounds keep a row from costing more.
  if (N < 2 || N > MAX_N || (N & (N - 1)) !== 0 || r < 1 || r > 32 || p < 1 || p > 16) return null;
  const salt = Buffer.from(parts[2] ?? '', 'base64url');
  const key = Buffer.from(parts[3] ?? '', 'base64url');
  if (salt.length < SALT_BYTES || key.length !== KEY_BYTES) return null;
  return { kind: 'scrypt', params: { N, r, p }, salt, key };
}

function parseHash(stored: string): ParsedHash | null {
  const parts = stored.split('$');
  return stored.startsWith('$argon2id$') ? parseArgon2(parts) : parseScrypt(parts);
}

/**
 * Whether `password` matches `stored` (Argon2id, or an earlier version's scrypt). A malformed or
 * missing hash (an account without a password) is hashed at `params` against a throwaway salt all
 * the same and answers false: the time taken does not say which case it was.
 */
export async function verifyPassword(
  password: string,
  stored: string | null,
  params: Argon2Params = DEFAULT_ARGON2,
): Promise<boolean> {
  const parsed = stored === null ? null : parseHash(stored);
  const bounded = password.slice(0, MAX_PASSWORD_LENGTH * 4);
  const key =
    parsed?.kind === 'scrypt'
      ? await deriveScrypt(bounded, parsed.salt, parsed.params)
      : await deriveArgon2(
          bounded,
          parsed?.salt ?? randomBytes(SALT_BYTES),
          parsed?.params ?? params,
        );
  const expected = parsed?.key ?? Buffer.alloc(KEY_BYTES);
  return timingSafeEqual(key, expected) && parsed !== null;
}

/**
 * Whether a stored hash should be replaced at the next successful sign-in: it is not Argon2id
 * (an earlier version's scrypt) or not at `params`, the cost new hashes get. Never true for a
 * hash that does not parse (there is no password to keep).
 */
export function needsRehash(stored: string | null, params: Argon2Params = DEFAULT_ARGON2): boolean {
  const parsed = stored === null ? null : parseHash(stored);
  if (parsed === null) return false;
  if (parsed.kind !== 'argon2id') return true;
  return (
    parsed.params.memoryKiB !== params.memoryKiB ||
    parsed.params.passes !== params.passes ||
    parsed.params.parallelism !== params.parallelism
  );
}
