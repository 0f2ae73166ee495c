/**
 * @module The redacted copy of arguments that goes into the audit log: values under secret-looking
 * keys, and values that look like credentials wherever they are, are masked. Raw arguments go to a
 * separate admin-only table.
 */

const SECRET_KEY =
  /(pass(word|wd|phrase)?|secret|token|api[_-]?key|auth(orization)?|cookie|credential|private[_-]?key|session[_-]?id|otp|pin|cvv|ssn)$/i;

/** Shapes of well-known credentials: provider key prefixes, JWTs, PEM keys, AWS key ids. */
const SECRET_VALUE = [
  /\b(sk|pk|rk)_(live|test)_[A-Za-z0-9]{10,}/,
  /\bsk-[A-Za-z0-9_-]{16,}/,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/,
  /\bAKIA[0-9A-Z]{16}\b/,
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  /\btg[ak]_[A-Za-z0-9_-]{20,}/,
];

export const MASK = '[REDACTED]';

export function looksSecret(value: string): boolean {
  return SECRET_VALUE.some((re) => re.test(value));
}

/** A copy with secrets masked; depth-bounded, never throws, never returns the input object. */
export function redactArguments(value: unknown, depth = 0): unknown {
  if (depth > 32) return MASK;
  if (typeof value === 'string') return looksSecret(value) ? MASK : value;
  if (Array.isArray(value)) return value.map((v) => redactArguments(v, depth + 1));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] =
        SECRET_KEY.test(k) && v !== null && typeof v !== 'object'
          ? MASK
          : redactArguments(v, depth + 1);
    }
    return out;
  }
  return value;
}
