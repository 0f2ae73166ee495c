/**
 * A master key that cannot be used fails `serve` at its start, and `toolgate config check`,
 * instead of a gateway that listens and reports ready while every call that needs the key (the
 * audit log's keyed hashes, tool secrets, channel URLs) fails: one line naming the file and what
 * is wrong with it (never its text), MASTER_KEY_INVALID, exit 5, and nothing made in the data
 * folder. Beside each: a good key starts, and a data folder without one still starts and makes
 * its key on first use.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  type CliRun,
  cleanEnv,
  ensureBuilt,
  listeningUrl,
  MAIN,
  spawnServe,
} from '../support/cli.js';

let root = '';
let n = 0;
before(() => {
  ensureBuilt();
  root = mkdtempSync(join(tmpdir(), 'toolgate-master-key-'));
});
after(() => rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

/** A test folder whose data folder holds `master.key` with `text` (none when null). */
function folder(text: string | null, mode = 0o600): string {
  n += 1;
  const dir = join(root, `f${n}`);
  mkdirSync(join(dir, 'data'), { recursive: true, mode: 0o700 });
  if (text !== null) {
    const key = join(dir, 'data', 'master.key');
    writeFileSync(key, text, { mode });
    chmodSync(key, mode);
  }
  return dir;
}

/** `serve` on `dir` to its exit (a refusal) or, when it listens, stopped: its output and code. */
function serveOnce(
  dir: string,
  env: NodeJS.ProcessEnv = {},
): Promise<CliRun & { listened: boolean }> {
  const server = spawnServe(dir, [], env);
  let stdout = '';
  let stderr = '';
  server.stdout?.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  server.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  let listened = false;
  void listeningUrl(server).then(
    () => {
      listened = true;
      server.kill('SIGTERM');
    },
    () => server.kill('SIGKILL'),
  );
  return new Promise((resolve) =>
    server.on('exit', (code) => resolve({ code: code ?? 1, stdout, stderr, listened })),
  );
}

function configCheck(dir: string, env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  const settings = join(dir, 'settings.yaml');
  writeFileSync(settings, `data_dir: ${join(dir, 'data')}\n`, { mode: 0o600 });
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [MAIN, 'config', 'check', settings],
      { cwd: dir, env: { ...cleanEnv(), ...env }, timeout: 60_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

const CANARY = 'CANARYKEYTEXT';

for (const [what, text, mode, says] of [
  ['not base64', `${CANARY} not a key!\n`, 0o600, /is not base64 text/],
  [
    'not 32 bytes',
    `${Buffer.from(`${CANARY}xx`).toString('base64')}\n`,
    0o600,
    /bytes; it must be 32 bytes/,
  ],
  [
    'readable by others',
    `${randomBytes(32).toString('base64')}\n`,
    0o644,
    /readable by group or others/,
  ],
] as const) {
  test(`a master key file ${what}: serve and config check refuse it at once, naming the file, never its text`, async () => {
    const dir = folder(text, mode);
    const started = await serveOnce(dir);
    assert.equal(started.listened, false, started.stdout);
    assert.equal(started.code, 5, started.stderr);
    const out = started.stdout + started.stderr;
    assert.match(out, /MASTER_KEY_INVALID/);
    assert.match(out, says);
    assert.ok(out.includes(join(dir, 'data', 'master.key')), out);
    assert.ok(!out.includes(CANARY) && !out.includes(text.trim()), 'the key text was echoed');
    assert.doesNotMatch(out, /\n\s+at /, 'a stack trace');
    // Nothing was made: no database, no token, no audit key beside the bad key.
    assert.deepEqual(readdirSync(join(dir, 'data')), ['master.key']);
    assert.equal(existsSync(join(dir, 'tg.db')), false);

    const checked = await configCheck(dir);
    assert.equal(checked.code, 2, checked.stderr);
    assert.match(checked.stderr, /\/master_key_file: /);
    assert.match(checked.stderr, says);
    assert.ok(!checked.stderr.includes(CANARY), 'config check echoed the key text');
  });
}

test('TOOLGATE_MASTER_KEY_FILE naming a missing file refuses the start; TOOLGATE_MASTER_KEY not a key too', async () => {
  const dir = folder(null);
  const missing = await serveOnce(dir, { TOOLGATE_MASTER_KEY_FILE: join(dir, 'no-such.key') });
  assert.equal(missing.listened, false);
  assert.equal(missing.code, 5, missing.stderr);
  assert.match(
    missing.stderr,
    /TOOLGATE_MASTER_KEY_FILE names .*no-such\.key, which does not exist/,
  );
  const inline = await serveOnce(dir, { TOOLGATE_MASTER_KEY: `${CANARY}=` });
  assert.equal(inline.listened, false);
  assert.equal(inline.code, 5, inline.stderr);
  assert.match(
    inline.stderr,
    /TOOLGATE_MASTER_KEY is not base64 text|TOOLGATE_MASTER_KEY is \d+ bytes/,
  );
  assert.ok(!inline.stderr.includes(CANARY));
  assert.equal(existsSync(join(dir, 'tg.db')), false);
});

test('benign: a good key file starts; a data folder without one starts (its key is made on first use)', async () => {
  const good = folder(`${randomBytes(32).toString('base64')}\n`);
  const withKey = await serveOnce(good);
  assert.equal(withKey.listened, true, withKey.stderr);
  assert.equal(withKey.code, 0, withKey.stderr);
  assert.equal((await configCheck(good)).code, 0);

  const fresh = folder(null);
  const without = await serveOnce(fresh);
  assert.equal(without.listened, true, without.stderr);
  assert.equal(without.code, 0, without.stderr);
  // Nothing needed it yet: it is made on first use, not at the start.
  assert.equal(existsSync(join(fresh, 'data', 'master.key')), false);
});
