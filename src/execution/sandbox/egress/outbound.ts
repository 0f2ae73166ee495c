/**
 * @module Outbound requests to URLs people configure (owner channels, reviewer webhooks): the
 * tool-egress rules, not a second set (docs/security-model.md "Outbound requests that people
 * configure"). http(s) without userinfo; https, on its default port, to a host name (never an IP
 * literal) whose every resolved address is public unicast (checkAddress); loopback — http, any
 * port — only when the gateway's admin allowed it (`allowLoopback`), never by anyone's request.
 * Checked when configured and again at each delivery, where the name is resolved once and the
 * checked address dialled (CheckedDialer), so a DNS answer that changes in between reaches
 * nothing it did not pass. Redirects are never followed.
 */
import ipaddr from 'ipaddr.js';
import { endpointUrlProblem, type Outbound, type OutboundProblem } from '../../../core/index.js';
import { checkAddress } from './address-policy.js';
import { CheckedDialer, type DialerOptions, isLoopbackAddress } from './checked-dialer.js';
import { requestBody, requestOver } from './checked-request.js';
import { systemResolver, withDeadline } from './resolver.js';

export interface OutboundOptions extends DialerOptions {
  /** An extra CA to trust, for tests whose receiver has a test certificate. Never configuration. */
  readonly unsafeTestCa?: string;
}

/** A URL in the shape outbound requests may take, or why not. */
type Shape =
  | { readonly ok: true; readonly url: URL; readonly host: string; readonly port: number }
  | ({ readonly ok: false } & OutboundProblem);

const refused = (rule: string, message: string): { ok: false } & OutboundProblem => ({
  ok: false,
  rule,
  message,
});

/** Thrown by `fetch` when a request is refused; its `rule` names the egress rule. */
export class OutboundRefused extends Error {
  constructor(
    readonly rule: string,
    message: string,
  ) {
    super(message);
  }
}

export class OutboundGuard implements Outbound {
  readonly #options: OutboundOptions;
  readonly #dialer: CheckedDialer;

  constructor(options: OutboundOptions = {}) {
    this.#options = options;
    const resolve = options.resolver ?? systemResolver;
    // An IP literal (loopback, where allowed) is its own answer: no look-up to change it.
    this.#dialer = new CheckedDialer({
      ...options,
      resolver: async (host) =>
        ipaddr.isValid(host)
          ? [{ address: host, family: host.includes(':') ? 6 : 4 }]
          : resolve(host),
    });
  }

  /** Whether loopback receivers are allowed on this gateway (an admin's setting). */
  get allowsLoopback(): boolean {
    return this.#options.allowLoopback === true;
  }

  #shape(raw: string): Shape {
    // The syntax first (a URL, http(s), no credentials): the one check of core/endpoint-url.ts.
    const syntax = endpointUrlProblem(raw);
    if (syntax) return refused(syntax.rule, syntax.message);
    const url = new URL(raw);
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
    const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
    const literal = ipaddr.isValid(host);
    const loopback = literal ? isLoopbackAddress(host) : host === 'localhost';
    if (loopback) {
      if (!this.allowsLoopback) {
        return refused(
          'egress.address_forbidden',
          'names a loopback host, which this gateway does not allow',
        );
      }
      return { ok: true, url, host, port };
    }
    if (literal) {
      const verdict = checkAddress(host);
      return verdict.ok
        ? refused('egress.ip_literal', 'names an IP address, not a host')
        : refused(verdict.rule, `names ${verdict.reason}`);
    }
    if (url.protocol !== 'https:') return refused('egress.scheme', 'must be https');
    if (port !== 443) return refused('egress.port', 'must use the https port 443');
    return { ok: true, url, host, port };
  }

  async problem(raw: string): Promise<OutboundProblem | null> {
    const shape = this.#shape(raw);
    if (!shape.ok) return { rule: shape.rule, message: shape.message };
    if (ipaddr.isValid(shape.host)) return null;
    let addresses: readonly { address: string }[];
    try {
      addresses = await withDeadline(
        (this.#options.resolver ?? systemResolver)(shape.host),
        this.#options.dnsTimeoutMs ?? 5_000,
        'DNS',
      );
    } catch {
      return { rule: 'egress.dns', message: `host ${shape.host} does not resolve` };
    }
    if (addresses.length === 0) {
      return { rule: 'egress.dns', message: `host ${shape.host} has no address` };
    }
    for (const { address } of addresses) {
      if (this.allowsLoopback && isLoopbackAddress(address)) continue;
      const verdict = checkAddress(address);
      // The message names the host and what it resolves to, never the address: an owner adding
      // a channel may not learn what an internal name resolves to (attack round 22, Y16).
      if (!verdict.ok) {
        return {
          rule: verdict.rule,
          message: `host ${shape.host} resolves to ${verdict.what}`,
          address,
        };
      }
    }
    return null;
  }

  readonly fetch: typeof fetch = async (input, init) => {
    const raw = typeof input === 'string' || input instanceof URL ? String(input) : input.url;
    const shape = this.#shape(raw);
    if (!shape.ok) throw new OutboundRefused(shape.rule, `the URL ${shape.message}`);
    const body = await requestBody(init);
    const dialed = await this.#dialer.dial(shape.host, shape.port);
    if (!dialed.ok) throw new OutboundRefused(dialed.rule, dialed.message);
    return requestOver(shape.url, shape.host, dialed.socket, init, body, {
      ...(this.#options.unsafeTestCa !== undefined
        ? { unsafeTestCa: this.#options.unsafeTestCa }
        : {}),
    });
  };
}
