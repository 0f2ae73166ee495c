/** @module The answer every argument rule gives: the value to use, or a stable rule id and why not. */

/**
 * `value` on success is what the caller must use from then on (the canonical URL, the resolved
 * real path), never the raw argument it was derived from.
 */
export type PolicyVerdict<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly rule: string; readonly message: string };

export function allow<T>(value: T): PolicyVerdict<T> {
  return { ok: true, value };
}

export function deny<T>(rule: string, message: string): PolicyVerdict<T> {
  return { ok: false, rule, message };
}

/** Most input characters a refusal message may quote: messages reach agents and logs. */
export const MAX_ECHO_CHARS = 100;

/**
 * Quotes at most MAX_ECHO_CHARS code points of untrusted input. Every code point outside
 * printable ASCII, and the quote and backslash, is written as `\u{…}`, so a message carries no
 * control, bidi or look-alike characters and cannot be mistaken for the input's own escapes.
 */
export function excerpt(input: string): string {
  let out = '';
  let count = 0;
  for (const ch of input) {
    if (count === MAX_ECHO_CHARS) return `"${out}"…`;
    const cp = ch.codePointAt(0) ?? 0;
    const plain = cp >= 0x20 && cp <= 0x7e && ch !== '"' && ch !== '\\';
    out += plain ? ch : `\\u{${cp.toString(16)}}`;
    count += 1;
  }
  return `"${out}"`;
}

/** Names a value's JSON type for a message without quoting the value itself. */
export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'undefined') return 'undefined';
  return `a ${typeof value}`;
}
