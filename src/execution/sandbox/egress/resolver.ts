/**
 * @module How the proxy resolves names: the system resolver with a deadline, or one injected
 * (tests). The proxy resolves once per connection and connects to what it checked, so a name
 * that answers differently a second time (DNS rebinding) never gets a second look-up.
 */
import { promises as dns } from 'node:dns';

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

export type Resolver = (host: string) => Promise<readonly ResolvedAddress[]>;

/** `dns.lookup` (what the OS would use: /etc/hosts, nsswitch) with every address, in its order. */
export const systemResolver: Resolver = async (host) => {
  const all = await dns.lookup(host, { all: true, verbatim: true });
  return all.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** Rejects after `ms` so a slow resolver cannot hold a connection open forever. */
export function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
