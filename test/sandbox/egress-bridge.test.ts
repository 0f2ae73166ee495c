/**
 * @module The egress wiring contract: with an `egressSocket`, the host Unix socket appears inside
 * the sandbox, socat bridges it to 127.0.0.1:3128, HTTP(S)_PROXY point there, and that is the only
 * way out (the network namespace stays loopback-only). The proxy here is a tiny HTTP server of the
 * test's own on a Unix socket; the real proxy and its rules are tested with the proxy.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { GvisorRunner, NamespaceRunner } from '../../src/execution/sandbox/index.js';
import { NODE, NODE_BINDS, NODE_LIMITS } from './drivers.js';

/** Sends one proxy-style request to $HTTP_PROXY and prints the env and what came back. */
const CLIENT = `
const proxy = new URL(process.env.HTTP_PROXY);
const req = require('http').get(
  { host: proxy.hostname, port: Number(proxy.port), path: 'http://api.example.test/v1/ping?x=1', headers: { host: 'api.example.test' } },
  (res) => { let b = ''; res.on('data', (d) => (b += d)); res.on('end', () => console.log(JSON.stringify({ status: res.statusCode, body: b, proxies: [process.env.HTTP_PROXY, process.env.HTTPS_PROXY, process.env.http_proxy, process.env.https_proxy] }))); },
);
req.on('error', (e) => console.log(JSON.stringify({ error: e.code })));`;

describe('egress bridge: a Unix socket bound in, bridged to 127.0.0.1:3128', () => {
  let dir = '';
  let socket = '';
  let server: Server;
  const seen: string[] = [];
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-egress-'));
    // The sandbox user (nobody when toolgate runs as root) must reach and connect to the socket.
    chmodSync(dir, 0o755);
    socket = join(dir, 'proxy.sock');
    server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.end('pong from the proxy');
    });
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    chmodSync(socket, 0o666);
  });
  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  for (const runner of [new NamespaceRunner(), new GvisorRunner()]) {
    test(`${runner.name}: a request to the proxy variables reaches the host socket`, async () => {
      seen.length = 0;
      const out = await runner.run({
        argv: [NODE, '-e', CLIENT],
        limits: NODE_LIMITS,
        binds: NODE_BINDS,
        egressSocket: socket,
      });
      assert.equal(out.kind, 'ok', out.stderr);
      const r = JSON.parse(out.stdout) as Record<string, unknown>;
      assert.equal(r.status, 200, out.stdout);
      assert.equal(r.body, 'pong from the proxy');
      assert.deepEqual(r.proxies, Array(4).fill('http://127.0.0.1:3128'));
      assert.deepEqual(seen, ['GET http://api.example.test/v1/ping?x=1']);
    });

    test(`${runner.name}: without an egress socket there is no proxy and no route`, async () => {
      const out = await runner.run({
        argv: [
          NODE,
          '-e',
          'console.log(JSON.stringify({ proxy: process.env.HTTP_PROXY ?? null }))',
        ],
        limits: NODE_LIMITS,
        binds: NODE_BINDS,
      });
      assert.equal(out.kind, 'ok', out.stderr);
      assert.deepEqual(JSON.parse(out.stdout), { proxy: null });
    });
  }
});
