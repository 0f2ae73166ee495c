/**
 * @module Test harness for the egress proxy: a real upstream HTTP server on 127.0.0.1, a resolver
 * that answers from a table (so names can point anywhere, including at rebinding answers), and
 * clients that talk to a lease's Unix socket the way a sandboxed tool would; and the gateway's
 * egress (proxy and HTTP runner) pointed at a loopback upstream.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { join } from 'node:path';
import { HttpToolRunner } from '../../src/execution/runtimes/index.js';
import type { ResolvedAddress, Resolver } from '../../src/execution/sandbox/egress/index.js';
import { EgressProxy } from '../../src/execution/sandbox/index.js';

export interface Upstream {
  readonly port: number;
  /** Every request the upstream saw, in order. */
  readonly seen: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[];
  close(): Promise<void>;
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

const defaultHandler: Handler = (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ ok: true, path: req.url }));
};

export async function startUpstream(handler: Handler = defaultHandler): Promise<Upstream> {
  const seen: Upstream['seen'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers from `table` (name → addresses); unknown names fail like NXDOMAIN. Counts look-ups. */
export function tableResolver(
  table: Record<string, readonly string[]>,
): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const fn = async (host: string): Promise<readonly ResolvedAddress[]> => {
    calls.push(host);
    const list = table[host];
    if (!list) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(fn, { calls });
}

/** A rebinding resolver: first answer `first`, every later one `then`. */
export function rebindingResolver(first: readonly string[], then: readonly string[]): Resolver {
  let n = 0;
  return async () => {
    n += 1;
    return (n === 1 ? first : then).map((address) => ({
      address,
      family: address.includes(':') ? 6 : 4,
    }));
  };
}

export interface ProxyResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** A plain-HTTP request through the lease socket, in absolute form like any proxy client. */
export function viaProxy(
  socketPath: string,
  target: string,
  options: { method?: string; headers?: Record<string, string | string[]>; body?: string } = {},
): Promise<ProxyResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | string[]> = { ...(options.headers ?? {}) };
    if (!Object.keys(headers).some((k) => k.toLowerCase() === 'host')) {
      try {
        headers.host = new URL(target).host;
      } catch {
        // not a URL: no Host header
      }
    }
    const req = http.request({
      socketPath,
      path: target,
      method: options.method ?? 'GET',
      headers,
      setHost: false,
      agent: false,
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('response aborted')));
    });
    req.on('error', reject);
    // Bounded: a test never waits on a proxy that stopped answering.
    req.setTimeout(5_000, () => req.destroy(new Error('proxy did not answer within 5 s')));
    req.end(options.body);
  });
}

/**
 * Sends raw bytes to the lease socket and returns everything it answered until it closed or
 * `idleMs` passed. For CONNECT, `after` is written once the 200 line arrives.
 */
export function rawExchange(
  socketPath: string,
  request: string,
  after?: string,
  idleMs = 1_500,
): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ path: socketPath });
    let out = '';
    let sentAfter = false;
    const finish = (): void => {
      socket.destroy();
      resolve(out);
    };
    let timer = setTimeout(finish, idleMs);
    socket.on('data', (c: Buffer) => {
      out += c.toString('latin1');
      if (
        after !== undefined &&
        !sentAfter &&
        out.includes('\r\n\r\n') &&
        out.startsWith('HTTP/1.1 200')
      ) {
        sentAfter = true;
        socket.write(after);
      }
      clearTimeout(timer);
      timer = setTimeout(finish, idleMs);
    });
    socket.on('error', finish);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
    socket.write(request);
    setTimeout(finish, 10_000).unref();
  });
}

export function statusOf(raw: string): number {
  const m = /^HTTP\/1\.1 (\d{3})/.exec(raw);
  return m ? Number(m[1]) : 0;
}

export function ruleOf(raw: string): string | undefined {
  return /x-toolgate-egress-rule: ([^\r\n]+)/i.exec(raw)?.[1];
}

/**
 * The gateway's `egress` option for a test whose HTTPS upstream `target` listens on loopback
 * `port`: a proxy and an HTTP runner resolving with `resolver`, trusting `tlsDir`/ca.pem.
 */
export function loopbackEgress(
  resolver: Resolver,
  target: string,
  port: number,
  tlsDir: string,
): { proxy: EgressProxy; http: HttpToolRunner } {
  const unsafeTestPorts = { [target]: port };
  return {
    proxy: new EgressProxy({ resolver, unsafeTestTargets: [target], unsafeTestPorts }),
    http: new HttpToolRunner({
      resolver,
      unsafeTestTargets: [target],
      unsafeTestPorts,
      unsafeTestCa: readFileSync(join(tlsDir, 'ca.pem'), 'utf8'),
    }),
  };
}
