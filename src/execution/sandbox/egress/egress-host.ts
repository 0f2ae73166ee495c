/**
 * @module Host names at the proxy (C10): parse a CONNECT or absolute-form authority,
 * refuse IP literals in any spelling and anything but one canonical DNS name, then compare with
 * the allow-list by equality, never by suffix.
 */
import { excerpt, isCanonicalDnsName, isIpLiteral } from '../../../domain/policy/index.js';
import { type EgressRefusal, refusal } from './egress-decision.js';

export interface Authority {
  readonly host: string;
  readonly port: number;
}

export type HostVerdict<T> = { ok: true; value: T } | ({ ok: false } & EgressRefusal);

const MAX_AUTHORITY_LENGTH = 300;

function no<T>(rule: string, message: string): HostVerdict<T> {
  return { ok: false, ...refusal(rule, message) };
}

/**
 * Lower-cases a name and drops one trailing dot, the only two spellings of the same DNS name
 * that are folded; everything else that is not canonical is refused, not rewritten.
 */
export function normalizeHostName(raw: string): string {
  const lower = raw.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/** The allow-list as given to a lease: each entry must already be a canonical DNS name. */
export function normalizeAllowList(hosts: readonly string[]): ReadonlySet<string> {
  const out = new Set<string>();
  for (const h of hosts) {
    const name = normalizeHostName(h);
    if (!isCanonicalDnsName(name) || isIpLiteral(name, name)) {
      throw new TypeError(`egress allow-list entry ${excerpt(h)} is not a DNS host name`);
    }
    out.add(name);
  }
  return out;
}

function parsePort(raw: string): number | undefined {
  if (raw.length === 0 || raw.length > 5) return undefined;
  for (const ch of raw) if (ch < '0' || ch > '9') return undefined;
  if (raw.length > 1 && raw.startsWith('0')) return undefined;
  const port = Number(raw);
  return port >= 1 && port <= 65_535 ? port : undefined;
}

/** Checks one host name (no port) and returns its canonical form. */
export function checkHostName(raw: string): HostVerdict<string> {
  for (const ch of raw) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp <= 0x20 || cp >= 0x7f || ch === '%' || ch === '\\' || ch === '/') {
      return no('egress.host_syntax', `host ${excerpt(raw)} is not a plain DNS name`);
    }
  }
  if (raw.startsWith('[')) {
    return no('egress.ip_literal', `host ${excerpt(raw)} is an IP address; only names are allowed`);
  }
  const host = normalizeHostName(raw);
  let parsed: string;
  try {
    // The WHATWG parser rewrites every IPv4 spelling (decimal, octal, hex, short) to dotted form.
    parsed = new URL(`http://${host}/`).hostname;
  } catch {
    return no('egress.host_syntax', `host ${excerpt(raw)} is not a valid host name`);
  }
  if (isIpLiteral(parsed, host)) {
    return no('egress.ip_literal', `host ${excerpt(raw)} is an IP address; only names are allowed`);
  }
  if (parsed !== host || !isCanonicalDnsName(host)) {
    return no(
      'egress.host_syntax',
      `host ${excerpt(raw)} is not a canonical DNS name (letters, digits, hyphens, dots)`,
    );
  }
  return { ok: true, value: host };
}

/**
 * Parses `host:port` (CONNECT) or `host[:port]` (absolute-form, `defaultPort` given). Userinfo,
 * brackets and anything the URL parser would reinterpret are refused before the host is read.
 */
export function parseAuthority(raw: string, defaultPort?: number): HostVerdict<Authority> {
  if (raw.length === 0 || raw.length > MAX_AUTHORITY_LENGTH) {
    return no('egress.host_syntax', 'the request target has no usable authority');
  }
  if (raw.includes('@')) {
    return no('egress.userinfo', 'the request target carries userinfo ("@"); none is allowed');
  }
  if (raw.startsWith('[')) {
    return no('egress.ip_literal', `host ${excerpt(raw)} is an IP address; only names are allowed`);
  }
  const colon = raw.lastIndexOf(':');
  let hostPart = raw;
  let port = defaultPort;
  if (colon !== -1) {
    hostPart = raw.slice(0, colon);
    port = parsePort(raw.slice(colon + 1));
    if (port === undefined) {
      return no('egress.port', `authority ${excerpt(raw)} does not end in a valid port`);
    }
  }
  if (port === undefined) return no('egress.port', `authority ${excerpt(raw)} names no port`);
  if (hostPart.includes(':')) {
    // More than one colon: an unbracketed IPv6 literal or garbage.
    return no('egress.ip_literal', `host ${excerpt(hostPart)} is not a DNS name`);
  }
  const host = checkHostName(hostPart);
  if (!host.ok) return host;
  return { ok: true, value: { host: host.value, port } };
}

/** Exact membership; never suffix, prefix or containment. */
export function checkAllowed(host: string, allow: ReadonlySet<string>): HostVerdict<string> {
  return allow.has(host)
    ? { ok: true, value: host }
    : no('egress.host_not_allowed', `host ${excerpt(host)} is not on this tool's egress list`);
}
