/**
 * @module The syntax of a URL toolgate sends to (a webhook, an OpenID provider, a JWKS or token
 * endpoint): a URL, http(s), no credentials in it, and — where an allow-list is given — one of the
 * listed hosts, compared exactly after parsing. It never decides that a URL may be sent to: the
 * scheme for its host, the port, IP literals, loopback and every resolved address are the outbound
 * rules' (the `Outbound` port, one implementation in src/execution/sandbox/egress/outbound.ts, which runs
 * this first), applied when the URL is configured and again at each request. No host, loopback
 * included, passes here by its name. Pure.
 */
import type { OutboundProblem } from './outbound.js';

export interface EndpointUrlRules {
  /** The only hosts the URL may name (exact names, loopback ones too); absent: any host. */
  readonly allowHosts?: readonly string[];
  /** The configuration key the message names, e.g. `webhook.allow_hosts`. */
  readonly allowHostsKey?: string;
}

/** Why this URL is not one toolgate could send to, or null; never a verdict on its host. */
export function endpointUrlProblem(
  url: string,
  rules: EndpointUrlRules = {},
): OutboundProblem | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { rule: 'egress.url', message: 'is not a URL' };
  }
  if (parsed.username !== '' || parsed.password !== '')
    return { rule: 'egress.userinfo', message: 'must not hold credentials' };
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return { rule: 'egress.scheme', message: 'must be https' };
  const host = parsed.hostname.toLowerCase();
  if (
    rules.allowHosts !== undefined &&
    !rules.allowHosts.map((h) => h.toLowerCase()).includes(host)
  ) {
    return {
      rule: 'egress.host_not_allowed',
      message: `host ${host} is not in ${rules.allowHostsKey ?? 'the allowed hosts'}`,
    };
  }
  return null;
}

/**
 * Whether a URL's host names loopback (`localhost`, 127.0.0.0/8 as the WHATWG parser writes it,
 * `[::1]`). For the gateway's own addresses only (a redirect URI a browser is sent to); never a
 * reason to send anything anywhere.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host === '[::1]') return true;
  const parts = host.split('.');
  return (
    parts.length === 4 &&
    parts[0] === '127' &&
    parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)
  );
}
