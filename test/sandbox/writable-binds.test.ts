/**
 * Writable binds (an MCP provider's workspace): the named folder is writable inside the sandbox,
 * everything else stays read-only (a read-only bind, the root), and the process driver, which
 * cannot mount, refuses a writable bind instead of silently running without one.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_SANDBOX_LIMITS } from '../../src/domain/catalog/index.js';
import { GvisorRunner, NamespaceRunner, ProcessRunner } from '../../src/execution/sandbox/index.js';

describe('writable binds', () => {
  let dir: string;
  let ws: string;
  let ro: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-wbind-'));
    chmodSync(dir, 0o755);
    ws = join(dir, 'ws');
    ro = join(dir, 'ro');
    mkdirSync(ws);
    mkdirSync(ro);
    chmodSync(ws, 0o777);
    chmodSync(ro, 0o777);
  });

  after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

  const script = 'echo in > /ws/out.txt; echo ro > /ro/out.txt; echo root > /evil.txt; true';
  const spec = () => ({
    argv: ['/bin/sh', '-c', script],
    limits: DEFAULT_SANDBOX_LIMITS,
    binds: [{ source: ro, target: '/ro' }],
    writableBinds: [{ source: ws, target: '/ws' }],
  });

  test('namespace: the workspace is writable, a read-only bind and the root are not', async () => {
    const run = await new NamespaceRunner().run(spec());
    assert.equal(run.kind, 'ok', run.stderr);
    assert.equal(readFileSync(join(ws, 'out.txt'), 'utf8'), 'in\n');
    assert.equal(existsSync(join(ro, 'out.txt')), false);
    assert.match(run.stderr, /Read-only file system/);
  });

  test('gvisor: the workspace is writable, a read-only bind is not', async (t) => {
    const runner = new GvisorRunner();
    if (!(await runner.probe()).available) return t.skip('gvisor unavailable on this host');
    rmSync(join(ws, 'out.txt'), { force: true });
    const run = await runner.run(spec());
    assert.equal(run.kind, 'ok', run.stderr);
    assert.equal(readFileSync(join(ws, 'out.txt'), 'utf8'), 'in\n');
    assert.equal(existsSync(join(ro, 'out.txt')), false);
  });

  test('process: a writable bind is refused, not ignored', async () => {
    const runner = new ProcessRunner();
    const run = await runner.run(spec());
    assert.equal(run.kind, 'driver_unavailable');
    await assert.rejects(runner.start(spec()), /writable/);
  });
});
