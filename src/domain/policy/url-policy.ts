/**
 * @module URL arguments: https to an exactly allow-listed DNS host, parsed by the WHATWG URL
 * parser and sent in its normalised form (C6).
 */
import ipaddr from 'ipaddr.js';
import type { PolicyVerdict } from './policy-verdict.js';
import { allow, deny, excerpt, typeName } from './policy-verdict.js';

export type { PolicyVerdict } from './policy-verdict.js';

export interface UrlRule {
  /**
   * Exact lower-case DNS host names; empty allows no host. An IP literal here never matches.
   * `'any'` (tools with unconstrained egress) keeps every other rule: https, a DNS name, no
   * userinfo, no port but the default one, an ASCII host.
   */
  readonly hosts: readonly string[] | 'any';
}

export const MAX_URL_LENGTH = 2048;

const SCHEME_PREFIX = 'https://';
const USERINFO_MESSAGE =
  'URL carries userinfo (a name, password or "@" before the host); none is allowed';
const MAX_DNS_NAME_LENGTH = 253;
const MAX_DNS_LABEL_LENGTH = 63;

/** Unicode White_Space above U+00A0 plus the BOM: invisible in logs and review screens. */
const UNICODE_SPACES = new Set([
  0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009,
  0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff,
]);

/**
 * Refused before parsing because the WHATWG parser silently strips or rewrites them (tabs and
 * newlines vanish, `\` becomes `/`), so what a reviewer reads would differ from what is fetched.
 */
function isForbiddenCodePoint(cp: number): boolean {
  return cp <= 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp === 0x5c /* \ */ || UNICODE_SPACES.has(cp);
}

/** Index (in UTF-16 units) and code point of the first forbidden character, if any. */
function firstForbiddenCodePoint(raw: string): { index: number; cp: number } | undefined {
  let index = 0;
  for (const ch of raw) {
    const cp = ch.codePointAt(0) ?? 0;
    if (isForbiddenCodePoint(cp)) return { index, cp };
    index += ch.length;
  }
  return undefined;
}

/**
 * The authority exactly as sent: after `https://`, up to the first `/`, `?` or `#` (backslash is
 * already refused, so these are the only delimiters the WHATWG parser would honour).
 */
function rawAuthorityOf(raw: string): string {
  const rest = raw.slice(SCHEME_PREFIX.length);
  let end = rest.length;
  for (const delimiter of ['/', '?', '#']) {
    const at = rest.indexOf(delimiter);
    if (at !== -1 && at < end) end = at;
  }
  return rest.slice(0, end);
}

/**
 * True for a host the WHATWG parser produced from any IP spelling (it rewrites decimal, octal,
 * hex, short and mixed IPv4 to dotted form, and keeps IPv6 in brackets), and, as a second
 * opinion, for anything ipaddr.js would read as an address.
 */
export function isIpLiteral(hostname: string, rawHost: string): boolean {
  if (hostname.startsWith('[') || rawHost.startsWith('[')) return true;
  if (ipaddr.IPv4.isValidFourPartDecimal(hostname)) return true;
  return ipaddr.isValid(hostname) || ipaddr.isValid(rawHost);
}

/**
 * ASCII upper-case letters lowered, nothing else: `toLowerCase` would also fold look-alikes
 * into ASCII (U+212A KELVIN SIGN becomes `k`), which must stay refused.
 */
function asciiLower(text: string): string {
  let out = '';
  for (const ch of text)
    out += ch >= 'A' && ch <= 'Z' ? String.fromCharCode(ch.charCodeAt(0) + 32) : ch;
  return out;
}

/** The raw authority without a trailing `:port` (IP literals, bracketed ones too, are refused before). */
function withoutPort(authority: string): string {
  const colon = authority.lastIndexOf(':');
  return colon === -1 ? authority : authority.slice(0, colon);
}

function isLdhLabel(label: string): boolean {
  if (label.length === 0 || label.length > MAX_DNS_LABEL_LENGTH) return false;
  if (label.startsWith('-') || label.endsWith('-')) return false;
  for (const ch of label) {
    const lowerLetter = ch >= 'a' && ch <= 'z';
    const digit = ch >= '0' && ch <= '9';
    if (!lowerLetter && !digit && ch !== '-') return false;
  }
  return true;
}

/**
 * Lower-case letter-digit-hyphen labels, no empty label (so no trailing dot), and a last label
 * that is not all digits: the one spelling of a DNS name that can be compared byte for byte.
 */
export function isCanonicalDnsName(host: string): boolean {
  if (host.length === 0 || host.length > MAX_DNS_NAME_LENGTH) return false;
  const labels = host.split('.');
  const last = labels[labels.length - 1] ?? '';
  let allDigits = last.length > 0;
  for (const ch of last) if (ch < '0' || ch > '9') allDigits = false;
  return !allDigits && labels.every(isLdhLabel);
}

/**
 * Allows `raw` only if it is an https URL to a host equal to one of `rule.hosts`. The WHATWG
 * parser reads it; the spellings it normalises without changing the destination are accepted
 * (an upper-case scheme or host, an explicit default port `:443`), those it would map from
 * something else are not (percent-encoding, full-width or other non-ASCII host characters, a
 * trailing dot, missing or extra slashes after the scheme). Never throws, never allows on an
 * unexpected path, and never compares hosts by suffix, prefix or containment. The returned `url`
 * is the parser's serialization: pass that on, not `raw`.
 *
 * A refusal message quotes at most one excerpt of the input (see `excerpt`), the authority rather
 * than the whole URL once it is known. Userinfo is refused before anything would quote it, since
 * it may hold a password.
 */
export function checkUrl(
  raw: unknown,
  rule: UrlRule,
): PolicyVerdict<{ url: string; host: string }> {
  if (typeof raw !== 'string')
    return deny('url.type', `a URL must be a string, not ${typeName(raw)}`);
  if (raw.length > MAX_URL_LENGTH) {
    return deny(
      'url.too_long',
      `URL is ${raw.length} characters; at most ${MAX_URL_LENGTH} are allowed`,
    );
  }
  const bad = firstForbiddenCodePoint(raw);
  if (bad !== undefined) {
    return deny(
      'url.syntax',
      `URL contains U+${bad.cp.toString(16).toUpperCase().padStart(4, '0')} at index ${bad.index}; whitespace, control characters and backslashes are not allowed`,
    );
  }
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return deny('url.syntax', `URL ${excerpt(raw)} is not an absolute URL`);
  }
  if (parsed.protocol !== 'https:') {
    return deny(
      'url.scheme',
      `URL scheme ${excerpt(parsed.protocol)} is not allowed; only https is`,
    );
  }
  // An empty `@` leaves username and password empty, so the raw authority is checked below too.
  if (parsed.username !== '' || parsed.password !== '')
    return deny('url.userinfo', USERINFO_MESSAGE);
  // `https:host` and `https:///host` parse to the same URL as `https://host`; a reviewer reading
  // them may not. The scheme's case is the parser's to fold.
  if (
    asciiLower(raw.slice(0, SCHEME_PREFIX.length)) !== SCHEME_PREFIX ||
    raw[SCHEME_PREFIX.length] === '/'
  ) {
    return deny('url.not_canonical', `URL ${excerpt(raw)} must start with "https://" and a host`);
  }
  const rawAuthority = rawAuthorityOf(raw);
  if (rawAuthority.includes('@')) return deny('url.userinfo', USERINFO_MESSAGE);
  const host = parsed.hostname;
  if (isIpLiteral(host, rawAuthority) || isIpLiteral(host, withoutPort(rawAuthority))) {
    return deny(
      'url.ip_literal',
      `URL host ${excerpt(rawAuthority)} is an IP address; only DNS host names are allowed`,
    );
  }
  // The parser drops the default port (`:443`, `:0443`, an empty `:`): any other is refused.
  if (parsed.port !== '') {
    return deny(
      'url.port',
      `URL authority ${excerpt(rawAuthority)} names port ${parsed.port}; only the default https port is allowed`,
    );
  }
  const rawHost = withoutPort(rawAuthority);
  if (asciiLower(rawHost) !== host || !isCanonicalDnsName(host)) {
    return deny(
      'url.not_canonical',
      `URL host ${excerpt(rawHost)} is not a plain DNS name: ASCII letters, digits and hyphens, no percent-encoding, no trailing dot`,
    );
  }
  if (rule.hosts !== 'any' && !rule.hosts.includes(host)) {
    return deny('url.host_not_allowed', `host ${excerpt(host)} is not allowed for this argument`);
  }
  return allow({ url: parsed.href, host });
}
