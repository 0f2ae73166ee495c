/**
 * A folder the CLI must create for a user-given path never hangs: under a pseudo filesystem
 * (/proc) it is one INPUT_INVALID line naming the path, while a new folder on disk is created
 * (the built CLI, a real child process bounded by a timeout).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { cleanEnv, ensureBuilt, MAIN } from '../support/cli.js';

let dir: string;
before(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-mkdirs-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const run = (args: string[]) =>
  new Promise<{ code: number | null; stdout: string; stderr: string; killed: boolean }>((done) => {
    const child = execFile(
      process.execPath,
      [MAIN, ...args],
      { cwd: dir, env: cleanEnv(), timeout: 20_000 },
      (err, stdout, stderr) =>
        done({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr, killed: child.killed }),
    );
  });

test('a database under /proc is refused at once with one line naming the path; a new folder on disk is created', async () => {
  const bad = await run([
    '--db',
    'sqlite:/proc/forbidden/x/tg.db',
    '--data-dir',
    join(dir, 'd1'),
    'operators',
    'list',
  ]);
  assert.equal(bad.killed, false, 'the CLI must not hang');
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /error INPUT_INVALID: cannot create folder \/proc\/forbidden\/x/);
  const data = await run([
    '--db',
    `sqlite:${join(dir, 'ok.db')}`,
    '--data-dir',
    '/proc/forbidden/data',
    'operators',
    'list',
  ]);
  assert.equal(data.killed, false, 'the CLI must not hang');
  assert.notEqual(data.code, 0);
  const good = await run([
    '--db',
    `sqlite:${join(dir, 'new', 'sub', 'tg.db')}`,
    '--data-dir',
    join(dir, 'd2', 'x'),
    'operators',
    'list',
  ]);
  assert.equal(good.killed, false);
  assert.ok(existsSync(join(dir, 'new', 'sub', 'tg.db')), good.stderr);
});
