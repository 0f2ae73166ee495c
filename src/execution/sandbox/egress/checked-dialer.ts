/**
 * @module The one way egress reaches the network: resolve the name once, refuse if ANY address is
 * not public unicast, then connect to the exact address that was checked (never the name again).
 * The proxy and the http runtime both dial through it.
 */
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { excerpt } from '../../../domain/policy/index.js';
import { checkAddress } from './address-policy.js';
import { type EgressRefusal, refusal } from './egress-decision.js';
import { type Resolver, systemResolver, withDeadline } from './resolver.js';

export interface DialerOptions {
  readonly resolver?: Resolver;
  /**
   * Exact `ip:port` pairs (`[v6]:port` for IPv6) exempt from the address-class rule, and only
   * that rule. For tests, whose upstreams can only live on loopback. Empty by default; never read
   * from configuration or any API.
   */
  readonly unsafeTestTargets?: readonly string[];
  /**
   * For tests only, like `unsafeTestTargets`: the checked `ip:port` (which must be one of those
   * targets) is connected at another port — a test upstream listens on a port the kernel chose,
   * while the tool's URL keeps the default port the policy allows (`127.0.0.1:443` → 41234), so
   * two test runs on one host never need the same port. Never read from configuration or any API.
   */
  readonly unsafeTestPorts?: Readonly<Record<string, number>>;
  readonly dnsTimeoutMs?: number;
  readonly connectTimeoutMs?: number;
  /**
   * Loopback addresses (127.0.0.0/8, ::1) pass the address rule, any port. Only where an admin
   * allows it for the whole gateway (outbound URLs people configure); never for tool egress.
   */
  readonly allowLoopback?: boolean;
}

export type DialResult =
  | { readonly ok: true; readonly socket: net.Socket; readonly address: string }
  | ({ readonly ok: false; readonly address?: string } & EgressRefusal);

/** 127.0.0.0/8 or ::1 (an IPv4-mapped loopback is not: it is refused as the rule says). */
export function isLoopbackAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const ip = ipaddr.parse(address);
  return ip.range() === 'loopback';
}

/** `ip:port` in one spelling, so a test target matches however it was written. */
function targetKey(address: string, port: number): string {
  const ip = ipaddr.parse(address);
  return ip.kind() === 'ipv6' ? `[${ip.toNormalizedString()}]:${port}` : `${ip.toString()}:${port}`;
}

function parseTestTarget(entry: string): string {
  const colon = entry.lastIndexOf(':');
  const host = entry.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  const port = Number(entry.slice(colon + 1));
  if (colon === -1 || !ipaddr.isValid(host) || !Number.isInteger(port) || port < 1) {
    throw new TypeError(`unsafeTestTargets entry ${excerpt(entry)} is not ip:port`);
  }
  return targetKey(host, port);
}

export class CheckedDialer {
  readonly #resolve: Resolver;
  readonly #testTargets: ReadonlySet<string>;
  readonly #testPorts: ReadonlyMap<string, number>;
  readonly #dnsTimeoutMs: number;
  readonly #connectTimeoutMs: number;
  readonly #allowLoopback: boolean;

  constructor(options: DialerOptions = {}) {
    this.#resolve = options.resolver ?? systemResolver;
    this.#testTargets = new Set((options.unsafeTestTargets ?? []).map(parseTestTarget));
    const ports = new Map<string, number>();
    for (const [entry, port] of Object.entries(options.unsafeTestPorts ?? {})) {
      const key = parseTestTarget(entry);
      if (!this.#testTargets.has(key) || !Number.isInteger(port) || port < 1 || port > 65_535) {
        throw new TypeError(
          `unsafeTestPorts entry ${excerpt(entry)} must be one of unsafeTestTargets, to a port 1–65535`,
        );
      }
      ports.set(key, port);
    }
    this.#testPorts = ports;
    this.#dnsTimeoutMs = options.dnsTimeoutMs ?? 5_000;
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.#allowLoopback = options.allowLoopback === true;
  }

  /**
   * Resolves `host` once and connects to `port` on the first checked address that answers.
   * Never throws; never connects to an address it did not check; never resolves twice.
   */
  async dial(host: string, port: number): Promise<DialResult> {
    let addresses: readonly { address: string }[];
    try {
      addresses = await withDeadline(this.#resolve(host), this.#dnsTimeoutMs, 'DNS');
    } catch {
      return { ok: false, ...refusal('egress.dns', `host ${excerpt(host)} does not resolve`) };
    }
    if (addresses.length === 0) {
      return { ok: false, ...refusal('egress.dns', `host ${excerpt(host)} has no address`) };
    }
    // Every answer is checked, not just the one used: a mixed answer is a rebinding attempt.
    for (const { address } of addresses) {
      const exempt = ipaddr.isValid(address) && this.#testTargets.has(targetKey(address, port));
      if (exempt || (this.#allowLoopback && isLoopbackAddress(address))) continue;
      const verdict = checkAddress(address);
      if (!verdict.ok) {
        return {
          ok: false,
          address,
          ...refusal(verdict.rule, `host ${excerpt(host)} resolves to ${verdict.reason}`),
        };
      }
    }
    let lastAddress = '';
    for (const { address } of addresses) {
      lastAddress = address;
      const socket = await this.#connect(
        address,
        ipaddr.isValid(address) ? (this.#testPorts.get(targetKey(address, port)) ?? port) : port,
      );
      if (socket) return { ok: true, socket, address };
    }
    return {
      ok: false,
      address: lastAddress,
      ...refusal(
        'egress.upstream_unreachable',
        `host ${excerpt(host)} port ${port} did not answer`,
      ),
    };
  }

  #connect(address: string, port: number): Promise<net.Socket | undefined> {
    return new Promise((resolve) => {
      const socket = net.connect({ host: address, port, noDelay: true });
      const timer = setTimeout(() => {
        socket.destroy();
        resolve(undefined);
      }, this.#connectTimeoutMs);
      const failed = (): void => {
        clearTimeout(timer);
        socket.destroy();
        resolve(undefined);
      };
      socket.once('error', failed);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeListener('error', failed);
        // A late error must never crash the gateway; the owner adds its own handlers.
        socket.on('error', () => {});
        resolve(socket);
      });
    });
  }
}
