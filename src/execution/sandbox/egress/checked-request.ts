/**
 * @module The one `fetch`-shaped request over a socket the CheckedDialer already connected to a
 * checked address: TLS (certificate checked for the URL's host) when the URL is https, no agent
 * and no other connection, and the response handed back as it came — a redirect is answered as it
 * is and never followed. Shared by the outbound rules (src/execution/sandbox/egress/outbound.ts) and an HTTP
 * provider's fetch (src/execution/providers/checked-fetch.ts); it must never dial anything itself.
 */
import type { IncomingMessage } from 'node:http';
import type net from 'node:net';
import { Readable } from 'node:stream';
import tls from 'node:tls';
import { http } from '../../node-http.js';

export interface CheckedRequestOptions {
  /** An extra CA to trust, for tests whose receiver has a test certificate. Never configuration. */
  readonly unsafeTestCa?: string;
  /** Sees the response before its body is read (a byte budget counts it here). */
  readonly onResponse?: (res: IncomingMessage) => void;
}

/** A request's body as bytes to send (a stream is read whole first), or undefined. */
export async function requestBody(
  init: RequestInit | undefined,
): Promise<string | Buffer | undefined> {
  if (init?.body === undefined || init.body === null) return undefined;
  if (typeof init.body === 'string') return init.body;
  return Buffer.from(await new Response(init.body).arrayBuffer());
}

/**
 * Sends one request for `url` over `dialled` (plain TCP to the checked address); `host` is the
 * name the certificate must hold. Rejects on a socket or TLS error, or when `init.signal` aborts.
 */
export function requestOver(
  url: URL,
  host: string,
  dialled: net.Socket,
  init: RequestInit | undefined,
  body: string | Buffer | undefined,
  options: CheckedRequestOptions = {},
): Promise<Response> {
  const socket: net.Socket =
    url.protocol === 'https:'
      ? tls.connect({
          socket: dialled,
          servername: host,
          ...(options.unsafeTestCa !== undefined ? { ca: options.unsafeTestCa } : {}),
        })
      : dialled;
  const headers: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, name) => {
    headers[name] = value;
  });
  const method = init?.method ?? 'GET';
  return new Promise<Response>((resolve, reject) => {
    const req = http.request(
      {
        method,
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
        options.onResponse?.(res);
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value === undefined) continue;
          for (const v of Array.isArray(value) ? value : [value]) responseHeaders.append(name, v);
        }
        const status = res.statusCode ?? 502;
        const hasBody = status !== 204 && status !== 304 && method !== 'HEAD';
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
