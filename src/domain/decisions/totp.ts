/** @module RFC 6238 TOTP (SHA-1, 6 digits, 30 s): the second factor for irreversible actions. */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export type TotpVerification =
  | { readonly ok: true; readonly step: number }
  | { readonly ok: false; readonly reason: 'malformed' | 'invalid' | 'replayed' };

// The authenticator-app defaults; anything else and most apps silently show wrong codes.
/** How many digits a code has; a code of any other length is malformed input. */
export const TOTP_DIGITS = 6;
const DIGITS = TOTP_DIGITS;
const STEP_SECONDS = 30;
/** Steps either side of the current one that are accepted, for clock drift and typing time. */
const WINDOW = 1;
const SECRET_BYTES = 20;
/** RFC 4226 R6: a shared secret of at least 128 bits. */
const MIN_SECRET_BYTES = 16;
const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** 160 random bits (the RFC 4226 recommendation), RFC 4648 base32 without padding. */
export function generateTotpSecret(): string {
  return encodeBase32(randomBytes(SECRET_BYTES));
}

/**
 * The `otpauth://` key URI authenticator apps read from a QR code. Issuer and account may not
 * contain a colon: the label format separates them with one and apps split on it after decoding.
 */
export function totpUri(secret: string, account: string, issuer = 'toolgate'): string {
  decodeTotpSecret(secret);
  for (const [name, value] of [
    ['account', account],
    ['issuer', issuer],
  ] as const) {
    if (value.length === 0 || value.includes(':')) {
      throw new TypeError(`TOTP ${name} must be non-empty and contain no colon`);
    }
  }
  // encodeURIComponent, not URLSearchParams: apps read `+` literally, not as a space.
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const query =
    `secret=${secret}&issuer=${encodeURIComponent(issuer)}` +
    `&algorithm=SHA1&digits=${DIGITS}&period=${STEP_SECONDS}`;
  return `otpauth://totp/${label}?${query}`;
}

/** The 6-digit code for the step containing `at`. Throws on an invalid secret or date. */
export function totpAt(secret: string, at: Date): string {
  return hotp(decodeTotpSecret(secret), totpStep(at), DIGITS);
}

/**
 * Accepts the current step ±1, comparing every candidate in constant time (all three are computed
 * and compared whatever the input). A step at or below `lastUsedStep` is refused as a replay; the
 * caller must store the returned `step` as the new `lastUsedStep` for this secret, atomically with
 * accepting it, and must rate-limit attempts (three live codes in a million make guessing cheap
 * otherwise). Throws on an invalid secret, date or `lastUsedStep` — never on `code`.
 */
export function verifyTotp(
  secret: string,
  code: unknown,
  now: Date,
  lastUsedStep?: number,
): TotpVerification {
  const key = decodeTotpSecret(secret);
  const current = totpStep(now);
  // An unchecked NaN here would make every `step <= lastUsedStep` false and disable replay checks.
  if (lastUsedStep !== undefined && !Number.isSafeInteger(lastUsedStep)) {
    throw new TypeError('lastUsedStep must be an integer');
  }
  if (!isSixAsciiDigits(code)) return { ok: false, reason: 'malformed' };
  const presented = Buffer.from(code, 'ascii');

  let fresh: number | undefined;
  let replayed = false;
  for (let step = current - WINDOW; step <= current + WINDOW; step++) {
    if (step < 0) continue;
    const matches = timingSafeEqual(presented, Buffer.from(hotp(key, step, DIGITS), 'ascii'));
    if (!matches) continue;
    // The highest matching step wins: it blocks the most future reuse.
    if (lastUsedStep === undefined || step > lastUsedStep) fresh = step;
    else replayed = true;
  }
  if (fresh !== undefined) return { ok: true, step: fresh };
  return { ok: false, reason: replayed ? 'replayed' : 'invalid' };
}

/** Whether `code` has the shape of a code at all (checked before an attempt is counted). */
export function isTotpCodeShaped(code: unknown): code is string {
  return isSixAsciiDigits(code);
}

/** Exactly six characters 0–9; other Unicode digits, signs, spaces and numbers are refused. */
function isSixAsciiDigits(code: unknown): code is string {
  if (typeof code !== 'string' || code.length !== DIGITS) return false;
  for (let i = 0; i < code.length; i++) {
    const c = code.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/** @internal The RFC 6238 time step (T0 = 0, X = 30 s) containing `at`; exported for tests. */
export function totpStep(at: Date): number {
  const ms = at.getTime();
  if (!Number.isFinite(ms)) throw new TypeError('TOTP time is not a valid date');
  return Math.floor(ms / 1000 / STEP_SECONDS);
}

/**
 * @internal RFC 4226 HOTP with HMAC-SHA-1 and dynamic truncation. Exported only so the tests can
 * check it against the 8-digit RFC vectors; not part of the public API.
 */
export function hotp(key: Uint8Array, counter: number, digits: number): string {
  if (!Number.isSafeInteger(counter) || counter < 0) {
    throw new RangeError('HOTP counter must be a non-negative integer');
  }
  if (!Number.isInteger(digits) || digits < 6 || digits > 8) {
    throw new RangeError('HOTP codes have 6 to 8 digits');
  }
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', key).update(message).digest();
  // mac is 20 bytes, so the offset (0–15) plus 3 is always in range.
  const offset = (mac[mac.length - 1] ?? 0) & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

function encodeBase32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += BASE32_ALPHABET[(buffer >>> bits) & 0x1f];
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32_ALPHABET[(buffer << (5 - bits)) & 0x1f];
  return out;
}

/**
 * @internal Strict RFC 4648 base32: upper-case alphabet, no padding, no spaces, no leftover
 * bits, at least 128 bits. Secrets are generated and stored by us, so there is no user typing to
 * forgive; a lenient decoder would let two spellings name one secret. Exported for tests.
 */
export function decodeTotpSecret(secret: string): Buffer {
  if (typeof secret !== 'string') throw new TypeError('TOTP secret must be a string');
  // Lengths 1, 3 and 6 (mod 8) cannot come from whole bytes.
  const rem = secret.length % 8;
  if (rem === 1 || rem === 3 || rem === 6) throw new TypeError('TOTP secret is not valid base32');
  const bytes: number[] = [];
  let buffer = 0;
  let bits = 0;
  for (const ch of secret) {
    const value = BASE32_ALPHABET.indexOf(ch);
    if (value < 0) throw new TypeError('TOTP secret is not valid base32');
    buffer = (buffer << 5) | value;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((buffer >>> bits) & 0xff);
      buffer &= (1 << bits) - 1;
    }
  }
  if (buffer !== 0) throw new TypeError('TOTP secret is not canonical base32');
  if (bytes.length < MIN_SECRET_BYTES) throw new TypeError('TOTP secret is shorter than 128 bits');
  return Buffer.from(bytes);
}
