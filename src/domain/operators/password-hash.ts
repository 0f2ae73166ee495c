/**
 * @module Local operators' passwords: scrypt (node:crypto) with a fresh 16-byte salt per hash and
 * its parameters stored with it (`scrypt$N=…,r=…,p=…$<salt>$<key>`, base64url), so the cost can be
 * raised later without breaking old hashes. Compared in constant time. A password is refused by
 * length only: length is what makes guessing expensive, composition rules add little.
 */
import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import { problem, ToolgateError } from '../../core/index.js';

export const MIN_PASSWORD_LENGTH = 12;
/** Long enough for any passphrase; bounded so nobody makes the gateway hash megabytes. */
export const MAX_PASSWORD_LENGTH = 1024;

export interface ScryptParams {
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

/** 2^15 × 8 × 128 B = 32 MiB and tens of milliseconds per hash on a server core. */
export const DEFAULT_SCRYPT: ScryptParams = { N: 2 ** 15, r: 8, p: 1 };
const KEY_BYTES = 32;
/** A stored hash can ask for at most this much: a row written by someone else is still bounded. */
const MAX_N = 2 ** 20;

function derive(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
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

export async function hashPassword(
  password: string,
  params: ScryptParams = DEFAULT_SCRYPT,
): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, params);
  return `scrypt$N=${params.N},r=${params.r},p=${params.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

interface ParsedHash {
  readonly params: ScryptParams;
  readonly salt: Buffer;
  readonly key: Buffer;
}

function parseHash(stored: string): ParsedHash | null {
  const parts = stored.split('$');
  if (parts.length !== 4 || parts[0] !== 'scrypt') return null;
  const m = /^N=(\d{1,8}),r=(\d{1,3}),p=(\d{1,3})$/.exec(parts[1] ?? '');
  if (!m) return null;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // N must be a power of two above 1 (scrypt's own rule); the bounds keep a row from costing more.
  if (N < 2 || N > MAX_N || (N & (N - 1)) !== 0 || r < 1 || r > 32 || p < 1 || p > 16) return null;
  const salt = Buffer.from(parts[2] ?? '', 'base64url');
  const key = Buffer.from(parts[3] ?? '', 'base64url');
  if (salt.length < 16 || key.length !== KEY_BYTES) return null;
  return { params: { N, r, p }, salt, key };
}

/**
 * Whether `password` matches `stored`. A malformed or missing hash (an account without a password)
 * is hashed against a throwaway salt all the same and answers false: the time taken does not say
 * which case it was.
 */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parsed = stored === null ? null : parseHash(stored);
  const salt = parsed?.salt ?? randomBytes(16);
  const key = await derive(
    password.slice(0, MAX_PASSWORD_LENGTH * 4),
    salt,
    parsed?.params ?? DEFAULT_SCRYPT,
  );
  const expected = parsed?.key ?? Buffer.alloc(KEY_BYTES);
  return timingSafeEqual(key, expected) && parsed !== null;
}
