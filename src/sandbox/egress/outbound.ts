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
import http from 'node:http';
import type net from 'node:net';
import { Readable } from 'node:stream';
import tls from 'node:tls';
import ipaddr from 'ipaddr.js';
import type { Outbound, OutboundProblem } from '../../core/index.js';
import { checkAddress } from './address-policy.js';
import { CheckedDialer, type DialerOptions, isLoopbackAddress } from './checked-dialer.js';
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
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return refused('egress.url', 'is not a URL');
    }
    if (url.username !== '' || url.password !== '')
      return refused('egress.userinfo', 'must not hold credentials');
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return refused('egress.scheme', 'must be https');
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
      if (!verdict.ok) {
        return { rule: verdict.rule, message: `host ${shape.host} resolves to ${verdict.reason}` };
      }
    }
    return null;
  }

  readonly fetch: typeof fetch = async (input, init) => {
    const raw = typeof input === 'string' || input instanceof URL ? String(input) : input.url;
    const shape = this.#shape(raw);
    if (!shape.ok) throw new OutboundRefused(shape.rule, `the URL ${shape.message}`);
    const dialed = await this.#dialer.dial(shape.host, shape.port);
    if (!dialed.ok) throw new OutboundRefused(dialed.rule, dialed.message);
    const socket: net.Socket =
      shape.url.protocol === 'https:'
        ? tls.connect({
            socket: dialed.socket,
            servername: shape.host,
            ...(this.#options.unsafeTestCa !== undefined ? { ca: this.#options.unsafeTestCa } : {}),
          })
        : dialed.socket;
    return request(shape.url, socket, init);
  };
}

/** One request over an already-dialled socket; the response as the receiver gave it. */
async function request(url: URL, socket: net.Socket, init: RequestInit | undefined) {
  const body =
    init?.body === undefined || init.body === null
      ? undefined
      : typeof init.body === 'string'
        ? init.body
        : Buffer.from(await new Response(init.body).arrayBuffer());
  const headers: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, name) => {
    headers[name] = value;
  });
  return new Promise<Response>((resolve, reject) => {
    const req = http.request(
      {
        method: init?.method ?? 'GET',
        path: `${url.pathname}${url.search}`,
        headers: {
          ...headers,
          ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}),
          host: url.host,
        },
        // No agent: the checked, already-connected socket is the only one this request uses.
        createConnection: () => socket,
      },
      (res) => {
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value === undefined) continue;
          for (const v of Array.isArray(value) ? value : [value]) responseHeaders.append(name, v);
        }
        const status = res.statusCode ?? 502;
        const hasBody = status !== 204 && status !== 304 && (init?.method ?? 'GET') !== 'HEAD';
        resolve(
          new Response(hasBody ? (Readable.toWeb(res) as ReadableStream<Uint8Array>) : null, {
            status,
            headers: responseHeaders,
          }),
        );
      },
    );
    req.on('error', (err) => {
      socket.destroy();
      reject(err);
    });
    const signal = init?.signal;
    if (signal) {
      if (signal.aborted) req.destroy(signal.reason as Error);
      else signal.addEventListener('abort', () => req.destroy(signal.reason as Error));
    }
    if (body !== undefined) req.end(body);
    else req.end();
  });
}
