/**
 * @module An MCP 2026-07-28 mirrored header's value as the body would hold it: the revision lets a
 * client send a value that is not plain header text as `=?base64?<Base64 of its UTF-8>?=`. Read
 * by the MCP edge (`Mcp-Name`) and by the gate's `headers` step (`Mcp-Param-*`) alike, so both
 * read one form (docs/security-model.md, "Mirrored headers compare canonical forms").
 */

const SENTINEL = /^=\?base64\?(.*)\?=$/s;
/** Canonical Base64: whole quads, padding only at the end (Node's decoder would take anything). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * A header value, its `=?base64?…?=` form decoded (UTF-8); undefined when that form is broken
 * (bad padding, a character outside the alphabet, not UTF-8): a mirror that cannot be read
 * cannot agree with the body. Never throws.
 */
export function decodeHeaderValue(value: string): string | undefined {
  const m = SENTINEL.exec(value);
  if (!m) return value;
  const encoded = m[1] ?? '';
  if (!BASE64.test(encoded)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(encoded, 'base64'));
  } catch {
    return undefined;
  }
}
