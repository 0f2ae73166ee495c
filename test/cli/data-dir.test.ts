/**
 * `--data-dir` governs every file toolgate creates: without `--db` or
 * `--admin-token-file`, `serve` keeps its database and admin token in the data folder, and the
 * admin CLI on the same data folder finds both; a gateway started with its data folder elsewhere
 * creates nothing in its working folder (the first start in a container failed on this).
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { cleanEnv, ensureBuilt, listeningUrl, MAIN } from '../support/cli.js';

const roots: string[] = [];
after(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-data-dir-'));
  roots.push(dir);
  return dir;
}

test('serve with --data-dir elsewhere creates nothing in its working folder; the CLI on that data folder finds the database and the admin token', async () => {
  ensureBuilt();
  const work = folder();
  const data = join(folder(), 'state');
  const server = spawn(
    process.execPath,
    [MAIN, '--data-dir', data, 'serve', '--demo', '--port', '0'],
    { cwd: work, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  try {
    const base = await listeningUrl(server);
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
    const listed = await new Promise<{ code: number; stdout: string; stderr: string }>((done) =>
      execFile(
        process.execPath,
        [MAIN, '--data-dir', data, '--json', 'tools', 'list'],
        { cwd: work, env: cleanEnv() },
        (err, stdout, stderr) => done({ code: err ? 1 : 0, stdout, stderr }),
      ),
    );
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok(listed.stdout.includes('get_order'), 'the CLI opened the database serve made');
  } finally {
    const exited = new Promise((done) => server.once('exit', done));
    server.kill('SIGTERM');
    await exited;
  }
  assert.deepEqual(readdirSync(work), [], 'nothing in the working folder');
  const files = readdirSync(data);
  for (const name of ['toolgate.db', 'admin-token', 'audit-signing-key.pem']) {
    assert.ok(files.includes(name), `${name} in the data folder (has ${files.join(', ')})`);
  }
  for (const name of files) {
    assert.equal(statSync(join(data, name)).mode & 0o077, 0, `${name} is private`);
  }
});

test('an empty data folder setting is refused (exit 2), as an empty TOOLGATE_DB is; nothing is created in the working folder', async () => {
  ensureBuilt();
  const work = folder();
  const run = (args: string[], env: NodeJS.ProcessEnv) =>
    new Promise<{ code: number; stderr: string }>((done) =>
      execFile(
        process.execPath,
        [MAIN, ...args, 'agents', 'list'],
        { cwd: work, env: { ...cleanEnv(), ...env } },
        (err, _stdout, stderr) => done({ code: err ? Number(err.code) : 0, stderr }),
      ),
    );
  for (const [args, env] of [
    [['--data-dir', ''], {}],
    [[], { TOOLGATE_DATA_DIR: '' }],
  ] as const) {
    const r = await run([...args], env);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /data folder .*empty/);
  }
  assert.deepEqual(readdirSync(work), [], 'nothing in the working folder');
});
