/**
 * `serve` stops in seconds on SIGTERM even when a client holds a connection open: a socket that
 * sent half a request is cut at the shutdown deadline (docs/operations.md "Stopping"; before,
 * serve waited for it for good: Node's header timeout is checked by the listener that close()
 * stops). The benign neighbour, a stop with no connection open, exits at once with code 0
 * (test/cli/cli.test.ts, `serve --demo --port 0 … exits cleanly on SIGTERM`).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ensureBuilt, listeningUrl, spawnServe } from '../support/cli.js';

/** Well above the shutdown deadline (2 s here) and a loaded host's start of exit. */
const STOP_BOUND_MS = 30_000;

let dir: string;

before(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-serve-stop-'));
});
after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

function exited(server: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => server.once('exit', (code) => resolve(code)));
}

test('SIGTERM with a half-sent request open: serve exits within the bound, with code 0', async () => {
  const server = spawnServe(dir, ['--shutdown-deadline', '2']);
  const base = new URL(await listeningUrl(server));
  const socket = connect(Number(base.port), '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.on('error', () => {});
  // Headers never finished: the server holds this connection until its header timeout.
  socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n');
  const stopped = exited(server);
  const t0 = Date.now();
  server.kill('SIGTERM');
  // Without the cut, serve never exits (its header timeout stops with the listener): bounded here.
  let bound: NodeJS.Timeout | undefined;
  const code = await Promise.race([
    stopped,
    new Promise<'still running'>((resolve) => {
      bound = setTimeout(() => resolve('still running'), STOP_BOUND_MS);
    }),
  ]);
  clearTimeout(bound);
  const took = Date.now() - t0;
  socket.destroy();
  if (code === 'still running') server.kill('SIGKILL');
  assert.equal(code, 0, `serve after ${took} ms: ${code}`);
});
