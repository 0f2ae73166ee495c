/**
 * @module What the health suites with a real upstream share: an HTTPS upstream on loopback (the
 * test certificate of test/fixtures/egress-tls) that they stop and start again on the same port,
 * what it answers being each suite's own `handle`; and a monitor fast enough to watch it.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Gateway } from '../../src/host/toolgate.js';
import type { HealthState } from '../../src/operations/health/index.js';
import { ROOT } from '../support/cli.js';

const TLS = join(ROOT, 'test', 'fixtures', 'egress-tls');

/** How often every tier is probed. */
export const INTERVAL_MS = 400;

/** The monitor's settings: probes every INTERVAL_MS, confirmed, broken and timed out quickly. */
export const FAST_HEALTH = {
  intervalMs: { public: INTERVAL_MS, restricted: INTERVAL_MS, privileged: INTERVAL_MS },
  confirmAfterMs: 100,
  breakerOpenMs: 300,
  tickMs: 20,
  probeTimeoutMs: 2_000,
};

export abstract class RestartableUpstream {
  server: https.Server | null = null;
  port = 0;

  protected abstract handle(req: IncomingMessage, res: ServerResponse): void;

  /** Listens on the port it had before (a fresh one the first time). */
  async start(): Promise<void> {
    const server = https.createServer(
      { key: readFileSync(join(TLS, 'server.key')), cert: readFileSync(join(TLS, 'server.pem')) },
      (req, res) => this.handle(req, res),
    );
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', resolve);
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

/**
 * Resolves at the first change of `tool` to `state` from now on (at once if it is there), with
 * the milliseconds it took; rejects after 20 s.
 */
export function healthReaches(tg: Gateway, tool: string, state: HealthState): Promise<number> {
  const started = performance.now();
  if (tg.health.healthOf(tool, '1.0.0').state === state) return Promise.resolve(0);
  return new Promise((resolve, reject) => {
    // The monitor's timers do not hold the process open; this wait does, with a deadline.
    const deadline = setTimeout(() => {
      off();
      reject(new Error(`${tool} did not become ${state}`));
    }, 20_000);
    const off = tg.health.on((e) => {
      if (e.kind === 'health_changed' && e.toolId === tool && e.to === state) {
        off();
        clearTimeout(deadline);
        resolve(performance.now() - started);
      }
    });
  });
}
