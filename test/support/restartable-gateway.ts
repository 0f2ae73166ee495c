/**
 * @module A gateway (`buildServer` over one SQLite file, the demo catalog applied) that a test
 * stops and starts again on the same port under a client, as a restart or a short outage would.
 * Its keys (master, approval, audit) are fixed across restarts, as a deployment's are.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/edge/rest/index.js';
import { type Gateway, openGateway, type ToolgateOptions } from '../../src/host/toolgate.js';
import { openDemoGateway } from './world.js';

export const ADMIN_TOKEN = 'restartable-admin-token-0123456789abcdef';

/** One gateway on one SQLite file, stopped and started again on the same port. */
export class RestartableGateway {
  tg: Gateway | null = null;
  app: FastifyInstance | null = null;
  port = 0;
  constructor(readonly options: ToolgateOptions) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(first = false): Promise<Gateway> {
    const tg = first ? await openDemoGateway(this.options) : await openGateway(this.options);
    const app = await buildServer(tg, { adminToken: ADMIN_TOKEN });
    await app.listen({ host: '127.0.0.1', port: this.port });
    this.port = (app.server.address() as AddressInfo).port;
    this.tg = tg;
    this.app = app;
    return tg;
  }

  /**
   * Stops the gateway as an outage does: every connection is cut, open streams included (a client's
   * `subscriptions/listen` stream would otherwise hold `close()` until the client hangs up).
   */
  async stop(): Promise<void> {
    const app = this.app;
    if (app) {
      const closing = app.close();
      app.server.closeAllConnections();
      await closing;
    }
    await this.tg?.close();
    this.app = null;
    this.tg = null;
  }

  gateway(): Gateway {
    assert.ok(this.tg, 'the gateway is running');
    return this.tg;
  }
}
