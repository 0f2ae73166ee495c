/**
 * @module Whether toolgate may send to a configured URL (a webhook, an OpenID provider): http(s)
 * without credentials in it, https unless the host is loopback, and — where an allow-list is
 * given — only to loopback or a listed host. Pure: the host is compared after parsing, exactly,
 * never by suffix.
 */

/** Loopback host names as `URL.hostname` spells them (IPv6 keeps its brackets there). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host === '[::1]') return true;
  const parts = host.split('.');
  // 127.0.0.0/8, written as the WHATWG parser normalises it (four decimal octets).
  return (
    parts.length === 4 &&
    parts[0] === '127' &&
    parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)
  );
}

export interface EndpointUrlRules {
  /** Hosts besides loopback the URL may name (exact names); absent: any https host. */
  readonly allowHosts?: readonly string[];
  /** The configuration key the message names, e.g. `webhook.allow_hosts`. */
  readonly allowHostsKey?: string;
}

/** Why this URL may not be sent to, or null when it may. */
export function endpointUrlProblem(url: string, rules: EndpointUrlRules = {}): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a URL';
  }
  if (parsed.username || parsed.password) return 'must not hold credentials';
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'must be http(s)';
  const host = parsed.hostname.toLowerCase();
  if (isLoopbackHost(host)) return null;
  if (
    rules.allowHosts !== undefined &&
    !rules.allowHosts.map((h) => h.toLowerCase()).includes(host)
  ) {
    return `host ${host} is neither loopback nor in ${rules.allowHostsKey ?? 'the allowed hosts'}`;
  }
  if (parsed.protocol !== 'https:') return 'must be https for a non-loopback host';
  return null;
}
