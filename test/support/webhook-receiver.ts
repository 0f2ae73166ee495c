/**
 * @module A real webhook receiver on 127.0.0.1 (a port from the kernel) for notification tests:
 * keeps every body, answers each request as `reply` says, and lets a test await a count of
 * requests instead of sleeping.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OutboundGuard } from '../../src/execution/sandbox/index.js';

export type Reply = number | 'hang';

export interface Receiver {
  readonly url: string;
  readonly bodies: string[];
  /** How the n-th request (0-based) is answered; default 200. */
  reply: (n: number) => Reply;
  /** Resolves once at least `n` requests have arrived. */
  received(n: number): Promise<void>;
  json<T>(): T[];
  close(): Promise<void>;
}

export async function webhookReceiver(path = '/hook'): Promise<Receiver> {
  const bodies: string[] = [];
  const waiters: { n: number; ok: () => void }[] = [];
  let reply: (n: number) => Reply = () => 200;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const n = bodies.length;
      bodies.push(Buffer.concat(chunks).toString());
      const r = reply(n);
      if (r !== 'hang') res.writeHead(r).end();
      for (const w of waiters.splice(0)) {
        if (bodies.length >= w.n) w.ok();
        else waiters.push(w);
      }
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    bodies,
    get reply() {
      return reply;
    },
    set reply(f) {
      reply = f;
    },
    received: (n) =>
      bodies.length >= n ? Promise.resolve() : new Promise<void>((ok) => waiters.push({ n, ok })),
    json: <T>() => bodies.map((b) => JSON.parse(b) as T),
    close: async () => {
      server.closeAllConnections();
      await new Promise((ok) => server.close(ok));
    },
  };
}

/**
 * The gateway setting these tests need: their receivers live on loopback, which a gateway allows
 * for outbound URLs people configure only when its admin says so (docs/security-model.md).
 */
export const LOOPBACK_OUTBOUND = Object.freeze({ allowLoopback: true });

/** The egress rules' fetch with loopback allowed, for tests that build a delivery themselves. */
export const loopbackFetch: typeof fetch = new OutboundGuard(LOOPBACK_OUTBOUND).fetch;
