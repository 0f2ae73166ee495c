/**
 * @module Origin and Host checks for /mcp (MCP Streamable HTTP transport: servers MUST validate
 * Origin). A browser page on another site, or one that rebound its DNS name to this host, sends
 * its own Origin and Host; both are compared, parsed, against allow-lists before anything else.
 * No Origin (non-browser clients) is allowed; a present one must match exactly.
 */

/** Loopback names the gateway always serves (it listens on loopback by default). */
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

export interface OriginPolicy {
  /** Exact origins (scheme://host[:port]) besides loopback ones, e.g. `https://tg.example.com`. */
  readonly allowedOrigins: ReadonlySet<string>;
  /** Host names (or host:port) besides loopback ones that this gateway is reached at. */
  readonly allowedHosts: ReadonlySet<string>;
}

/**
 * A refusal carries the header as sent (its first 300 characters) and its length: the caller's
 * text, which the audit keeps only as a keyed hash beside its form (headerForm).
 */
export type OriginVerdict =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly reason: 'origin' | 'host';
      readonly value: string;
      readonly length: number;
    };

/**
 * What a security operator may read of a refused header without its text (anyone may write
 * anything there): an Origin's scheme (`http`, `https`, `null`, `other`, `not-a-url`), a Host's
 * shape (`authority` for a well-formed host[:port], `malformed`), or `empty`.
 */
export function headerForm(reason: 'origin' | 'host', value: string): string {
  if (value.length === 0) return 'empty';
  if (reason === 'host') return hostUrl(value) ? 'authority' : 'malformed';
  if (value === 'null') return 'null';
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(value)?.[1]?.toLowerCase();
  if (scheme === undefined) return 'not-a-url';
  return scheme === 'http' || scheme === 'https' ? scheme : 'other';
}

/**
 * The audit of a refusal (`mcp.origin_refused`): anyone can send any header, so what was sent is
 * kept only as its keyed hash (repeats group by it) beside its form and length, and the peer's
 * address as its keyed hash too (SecurityEvents.record's `caller`).
 */
export function originRefusal(
  verdict: Extract<OriginVerdict, { ok: false }>,
  remote: string,
): [Record<string, unknown>, { hashed: Record<string, string> }] {
  const { reason, value, length } = verdict;
  return [{ reason, form: headerForm(reason, value), length }, { hashed: { value, remote } }];
}

/** Parses a configured origin; throws a TypeError naming what is wrong (startup refuses it). */
export function parseAllowedOrigin(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`allowed origin ${JSON.stringify(value)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError(`allowed origin ${JSON.stringify(value)} must be http or https`);
  // An origin is scheme, host and port: a path, query or credentials mean a mistake.
  if (url.origin !== value.replace(/\/$/, '').toLowerCase() || url.username || url.password)
    throw new TypeError(
      `allowed origin ${JSON.stringify(value)} must be only scheme://host[:port] (got ${url.origin})`,
    );
  return url.origin;
}

/** Parses a configured host name or host:port; throws a TypeError when it is neither. */
export function parseAllowedHost(value: string): string {
  const url = hostUrl(value);
  if (!url) throw new TypeError(`allowed host ${JSON.stringify(value)} is not a host[:port]`);
  return url.host;
}

export function originPolicy(
  origins: readonly string[] = [],
  hosts: readonly string[] = [],
): OriginPolicy {
  return {
    allowedOrigins: new Set(origins.map(parseAllowedOrigin)),
    allowedHosts: new Set(hosts.map(parseAllowedHost)),
  };
}

/** `host[:port]` as an authority and nothing more: no userinfo, path, spaces or other bytes. */
function hostUrl(value: string): URL | null {
  if (value.length === 0 || value.length > 300 || /[^A-Za-z0-9.:[\]-]/.test(value)) return null;
  try {
    return new URL(`http://${value}`);
  } catch {
    return null;
  }
}

/** Decides from the request's Origin and Host headers; never throws. */
export function checkOriginHost(
  origin: string | undefined,
  host: string | undefined,
  policy: OriginPolicy,
): OriginVerdict {
  const hostUrlValue = host === undefined ? null : hostUrl(host);
  if (
    !hostUrlValue ||
    !(
      LOOPBACK_HOSTS.has(hostUrlValue.hostname) ||
      policy.allowedHosts.has(hostUrlValue.hostname) ||
      policy.allowedHosts.has(hostUrlValue.host)
    )
  ) {
    return {
      ok: false,
      reason: 'host',
      value: (host ?? '').slice(0, 300),
      length: host?.length ?? 0,
    };
  }
  if (origin === undefined) return { ok: true };
  let url: URL | null = null;
  try {
    url = new URL(origin);
  } catch {
    url = null;
  }
  // `null` (sandboxed frames, file:), other schemes and anything not already in origin form fail.
  const exact =
    url !== null &&
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    url.origin === origin.toLowerCase();
  if (
    exact &&
    url !== null &&
    (policy.allowedOrigins.has(url.origin) || LOOPBACK_HOSTS.has(url.hostname))
  ) {
    return { ok: true };
  }
  return { ok: false, reason: 'origin', value: origin.slice(0, 300), length: origin.length };
}
