/**
 * @module The real drivers the sandbox suites run against, and what every case shares: small
 * limits, the node binary (bound in when it lives outside /usr), a host HTTP server that must keep
 * answering.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SandboxLimits } from '../../src/domain/catalog/index.js';
import {
  GvisorRunner,
  NamespaceRunner,
  ProcessRunner,
  type ReadOnlyBind,
  type SandboxRunner,
} from '../../src/execution/sandbox/index.js';

export const DRIVERS: readonly SandboxRunner[] = [
  new ProcessRunner(),
  new NamespaceRunner(),
  new GvisorRunner(),
];

export const LIMITS: SandboxLimits = {
  wall_time_ms: 5_000,
  cpu_ms: 3_000,
  memory_mb: 256,
  processes: 32,
  open_files: 64,
  output_bytes: 65_536,
  scratch_mb: 8,
};

/** node starts under the default limits: RLIMIT_DATA leaves room for V8's reservations (rlimits.ts). */
export const NODE_LIMITS: SandboxLimits = LIMITS;

export const NODE = process.execPath;
export const NODE_BINDS: ReadOnlyBind[] = NODE.startsWith('/usr/')
  ? []
  : [{ source: NODE, target: NODE }];

/** Cases a driver skips: each by name, with the reason. */
export type Skips = Readonly<Record<string, string>>;

/** An HTTP server on the host's 127.0.0.1 that stands for the gateway staying healthy. */
export class HostProbe {
  readonly #server: Server;
  port = 0;

  constructor() {
    this.#server = createServer((_req, res) => res.end('alive'));
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.port = (this.#server.address() as AddressInfo).port;
    return this;
  }

  /** Fails the test when the host does not answer within a second. */
  async assertResponsive(): Promise<void> {
    const res = await fetch(`http://127.0.0.1:${this.port}/`, {
      signal: AbortSignal.timeout(1_000),
    });
    assert.equal(await res.text(), 'alive');
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
