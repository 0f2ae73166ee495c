/**
 * @module `serve` says nothing on stderr when all is well: no warning at start, and none when the
 * REST front compiles its route schemas (on each route's first request, src/edge/rest/lazy-schemas.ts).
 * Ajv used to print `unknown format "date-time" ignored` for the health override's body: the
 * front's Ajv now knows the standard formats (ajv-formats), so the format is checked, not ignored.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { buildServer } from '../../src/edge/rest/index.js';
import { openToolgate } from '../../src/host/toolgate.js';
import { ensureBuilt, listeningUrl, spawnServe } from '../support/cli.js';

const TOKEN = 'serve-quiet-admin-token-not-a-secret-0000000000';

let dir: string;
before(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-serve-quiet-'));
});
after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

function stderrOf(server: ChildProcess): { text: () => string } {
  let text = '';
  server.stderr?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  return { text: () => text };
}

test('serve --demo starts, compiles a schema with a format on its first request, and prints nothing on stderr', async () => {
  const server = spawnServe(dir, [], { TOOLGATE_ADMIN_TOKEN: TOKEN });
  const stderr = stderrOf(server);
  const exited = new Promise<number | null>((resolve) => server.once('exit', resolve));
  try {
    const base = await listeningUrl(server);
    const override = (expires_at: string) =>
      fetch(`${base}/v1/tools/get_order/versions/1.0.0/health/override`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ state: 'degraded', reason: 'maintenance', expires_at }),
      });
    // The format is checked now, not ignored: a time that is not RFC 3339 is a schema error.
    const refused = await override('next tuesday');
    assert.equal(refused.status, 400);
    const body = (await refused.json()) as { code: string; details: { problems: unknown[] } };
    assert.equal(body.code, 'INPUT_INVALID');
    assert.deepEqual(body.details.problems, [
      {
        pointer: '/body/expires_at',
        message: 'must match format "date-time"',
        rule: 'schema.format',
      },
    ]);
    const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
    assert.equal((await override(inAnHour)).status, 200);
    assert.equal((await fetch(`${base}/openapi.json`)).status, 200);
  } finally {
    server.kill('SIGTERM');
    await exited;
  }
  assert.deepEqual(
    stderr
      .text()
      .split('\n')
      .filter((line) => line.trim() !== ''),
    [],
    'serve wrote to stderr',
  );
});

test('every route schema of the REST front compiles without a warning', async () => {
  const db = join(dir, 'compile.db');
  const tg = await openToolgate({ db: `sqlite:${db}`, health: false });
  const warned: unknown[][] = [];
  const warn = console.warn;
  const log = console.log;
  console.warn = (...args: unknown[]) => void warned.push(args);
  console.log = (...args: unknown[]) => void warned.push(args);
  try {
    const app = await buildServer(tg, { adminToken: TOKEN });
    try {
      assert.ok(app.compileSchemas() > 100);
    } finally {
      await app.close();
    }
  } finally {
    console.warn = warn;
    console.log = log;
    await tg.close();
  }
  assert.deepEqual(warned, []);
});
