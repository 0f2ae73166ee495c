/**
 * @module The redacted copy of arguments that goes into the audit log: the whole value under a
 * secret-looking key (scalar, array or object), and strings that look like credentials wherever
 * they are, are masked. Raw arguments go to a separate table that only auditors are shown.
 */

import { isEntryRef } from './call-context.js';

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
      // The whole value: a token in a list or a password in a wrapper object is still the
      // secret, and the audit log is append-only, so nothing under such a key is kept. null
      // (no value) stays, so "not given" remains visible.
      out[k] = SECRET_KEY.test(k) && v !== null ? MASK : redactArguments(v, depth + 1);
    }
    return out;
  }
  return value;
}

/**
 * A tool name as the audit log may keep it: bounded, and masked when it is shaped like a
 * credential (an agent pasting a key where the tool name goes). Non-strings are named by type.
 */
export function attemptedName(toolRef: unknown): string {
  // A resource URI may hold personal data (a customer's address): only that a URI was asked.
  if (isEntryRef(toolRef)) {
    return toolRef.entry === 'prompt' ? `prompt:${attemptedName(toolRef.name)}` : 'resource URI';
  }
  if (typeof toolRef !== 'string') return typeof toolRef;
  // Checked before the cut: a cut could leave a shortened key that no longer matches a shape.
  return looksSecret(toolRef) ? MASK : toolRef.slice(0, 200);
}
