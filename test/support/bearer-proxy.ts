/**
 * @module A pass-through HTTP proxy on a kernel port that adds `Authorization: Bearer <token>` to
 * every request that has none, for clients with no way to send a header (the MCP conformance CLI
 * takes only a URL). Everything else — method, path, Host, Origin, body, streamed responses —
 * goes through unchanged, so what the gateway sees is what the client sent.
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BearerProxy {
  /** The proxy's origin, e.g. http://127.0.0.1:40123. */
  readonly url: string;
  close(): Promise<void>;
}

export async function startBearerProxy(target: string, token: string): Promise<BearerProxy> {
  const to = new URL(target);
  const server = createServer((req, res) => {
    const headers = { ...req.headers };
    headers.authorization ??= `Bearer ${token}`;
    const upstream = request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers },
      (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
