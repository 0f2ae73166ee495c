/**
 * Every file the CLI reads from a path an operator gives (--db sqlite:, --password-file,
 * --token-file, apply -f, providers classify -f, secrets --from-file, audit verify --key and
 * --bundle, serve --admin-token-file and the TOOLGATE_*_FILE / config variables) is a regular file
 * read to a bound: a FIFO, /dev/zero or a folder is one INPUT_INVALID naming the option, at once
 * and with exit code 2 (usage) — never a hang or a read without end — while a regular file and stdin
 * (`-`, where documented) still work. Built CLI, real child processes, each killed if it is still
 * running after BOUND_MS (a refusal takes well under a second; a hang never ends).
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cleanEnv, ensureBuilt, MAIN } from '../support/cli.js';

const BOUND_MS = 15_000;
const MIB = 1024 * 1024;
const STACK = /\n\s+at /;

interface BoundedRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** Still running at BOUND_MS: killed. */
  readonly killed: boolean;
}

let dir: string;
let fifo: string;
let folder: string;

function run(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; input?: string | Buffer; db?: string } = {},
): Promise<BoundedRun> {
  const db = options.db ?? `sqlite:${join(dir, 'tg.db')}`;
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [MAIN, '--db', db, '--data-dir', join(dir, 'data'), '--json', ...args],
      {
        cwd: dir,
        env: { ...cleanEnv(), ...options.env },
        timeout: BOUND_MS,
        killSignal: 'SIGKILL',
        maxBuffer: 16 * MIB,
      },
      (err, stdout, stderr) =>
        resolve({
          code: err ? Number((err as { code?: number }).code ?? 1) : 0,
          stdout,
          stderr,
          killed: child.killed || (err as { signal?: string } | null)?.signal === 'SIGKILL',
        }),
    );
    // A refusal may close stdin before all of a large input is written: not this test's concern.
    child.stdin?.on('error', () => {});
    child.stdin?.end(options.input ?? '');
  });
}

/** One structured INPUT_INVALID naming `option` (and what is wrong), exit 2, no stack trace. */
function assertRefused(r: BoundedRun, option: string, why: RegExp, what: string): void {
  assert.equal(r.killed, false, `${what}: still running after ${BOUND_MS} ms (killed)`);
  assert.equal(r.code, 2, `${what}: ${r.stdout}${r.stderr}`);
  assert.doesNotMatch(r.stdout + r.stderr, STACK, `${what} printed a stack`);
  const body = JSON.parse(r.stdout) as { error: { code: string; message: string } };
  assert.equal(body.error.code, 'INPUT_INVALID', `${what}: ${r.stdout}`);
  assert.ok(body.error.message.includes(option), `${what}: ${body.error.message}`);
  assert.match(body.error.message, why, what);
}

function assertOk(r: BoundedRun, what: string): void {
  assert.equal(r.killed, false, `${what}: still running after ${BOUND_MS} ms (killed)`);
  assert.equal(r.code, 0, `${what}: ${r.stdout}${r.stderr}`);
}

/** A FIFO, an endless device and a folder, with the words each is refused with. */
const hostile = (): [string, RegExp][] => [
  [fifo, /FIFO/],
  ['/dev/zero', /character device/],
  [folder, /directory/],
];

before(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-file-inputs-'));
  fifo = join(dir, 'fifo');
  // 0600: the private-file checks (admin token, master key) must not be what refuses it.
  execFileSync('mkfifo', ['-m', '600', fifo]);
  folder = join(dir, 'folder');
  mkdirSync(folder);
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('files the CLI reads from a path it is given', () => {
  test('--db sqlite: a FIFO, a device or a folder is refused naming --db; a new file is created', async () => {
    for (const [path, why] of [...hostile(), ['/dev/full', /character device/] as const]) {
      const r = await run(['tools', 'list'], { db: `sqlite:${path}` });
      assertRefused(r, '--db', why, `--db sqlite:${path}`);
    }
    assertOk(await run(['tools', 'list'], { db: `sqlite:${join(dir, 'new.db')}` }), 'a new db');
  });

  test('--password-file: a FIFO, /dev/zero, a folder or over 1 MiB is refused; a file and stdin work', async () => {
    for (const [path, why] of hostile()) {
      const r = await run([
        'operators',
        'create',
        'zed',
        '--roles',
        'auditor',
        '--password-file',
        path,
      ]);
      assertRefused(r, '--password-file', why, `--password-file ${path}`);
      const set = await run(['operators', 'set-password', 'zed', '--password-file', path]);
      assertRefused(set, '--password-file', why, `set-password --password-file ${path}`);
    }
    const big = join(dir, 'big-password');
    writeFileSync(big, Buffer.alloc(MIB + 1, 'a'));
    assertRefused(
      await run(['operators', 'create', 'zed', '--roles', 'auditor', '--password-file', big]),
      '--password-file',
      /over the limit of 1048576 bytes/,
      'a password file over 1 MiB',
    );
    assertRefused(
      await run(['operators', 'create', 'zed', '--roles', 'auditor', '--password-file', '-'], {
        input: Buffer.alloc(2 * MIB, 'a'),
      }),
      '--password-file',
      /over the limit/,
      'a password over 1 MiB on stdin',
    );
    const file = join(dir, 'password');
    writeFileSync(file, 'a long enough password\n');
    assertOk(
      await run(['operators', 'create', 'ann', '--roles', 'auditor', '--password-file', file]),
      'a password file',
    );
    assertOk(
      await run(['operators', 'create', 'bob', '--roles', 'auditor', '--password-file', '-'], {
        input: 'another long password\n',
      }),
      'a password on stdin',
    );
  });

  test('apply -f: a FIFO, /dev/zero, a folder or over 10 MiB is refused naming -f; a file and stdin work', async () => {
    for (const [path, why] of hostile()) {
      assertRefused(await run(['apply', '-f', path]), '-f', why, `apply -f ${path}`);
      assertRefused(
        await run(['providers', 'classify', 'p', 't', '-f', path]),
        '-f',
        why,
        `providers classify -f ${path}`,
      );
    }
    const big = join(dir, 'big.yaml');
    writeFileSync(big, Buffer.alloc(10 * MIB + 1, ' '));
    assertRefused(
      await run(['apply', '-f', big]),
      '-f',
      /over the limit of 10485760 bytes/,
      'apply -f over 10 MiB',
    );
    const agent = 'kind: Agent\nspec: { id: file-bot, owner: qa }\n';
    const file = join(dir, 'agent.yaml');
    writeFileSync(file, agent);
    assertOk(await run(['apply', '-f', file]), 'apply -f a file');
    assertOk(await run(['apply', '-f', '-'], { input: agent }), 'apply -f - (stdin)');
  });

  test('secrets --from-file, --token-file and audit --key / --bundle refuse a FIFO, /dev/zero and a folder', async () => {
    for (const [path, why] of hostile()) {
      assertRefused(
        await run(['secrets', 'set', 'k', '--tool', 'billing', '--from-file', path]),
        '--from-file',
        why,
        `secrets set --from-file ${path}`,
      );
      assertRefused(
        await run(['--token-file', path, 'tools', 'list']),
        '--token-file',
        why,
        `--token-file ${path}`,
      );
      assertRefused(
        await run(['audit', 'verify', '--key', path]),
        '--key',
        why,
        `audit verify --key ${path}`,
      );
    }
    const bundle = join(dir, 'bundle');
    mkdirSync(bundle);
    execFileSync('mkfifo', [join(bundle, 'context.json')]);
    assertRefused(
      await run(['audit', 'verify', '--bundle', bundle]),
      'audit bundle file',
      /FIFO/,
      'a bundle whose context.json is a FIFO',
    );
    const value = join(dir, 'secret-value');
    writeFileSync(value, 'a secret value of some length\n');
    assertOk(
      await run(['secrets', 'set', 'k', '--tool', 'billing', '--from-file', value]),
      'secrets set --from-file a file',
    );
    assertOk(
      await run(['secrets', 'rotate', 'k', '--tool', 'billing'], {
        input: 'the next secret value\n',
      }),
      'secrets rotate from stdin',
    );
  });

  test('serve and the master key: a FIFO as a file they read is refused at start, naming it', async () => {
    const serve = ['serve', '--port', '0'];
    assertRefused(
      await run([...serve, '--admin-token-file', fifo]),
      '--admin-token-file',
      /FIFO/,
      'serve --admin-token-file FIFO',
    );
    const token = { TOOLGATE_ADMIN_TOKEN: 'tga_localtestlocaltestlocaltest0000000000000' };
    const variables: [NodeJS.ProcessEnv, string][] = [
      [{ TOOLGATE_DETECTORS: fifo }, 'TOOLGATE_DETECTORS'],
      [{ TOOLGATE_OAUTH_CONFIG: fifo }, 'TOOLGATE_OAUTH_CONFIG'],
      [
        {
          TOOLGATE_OIDC_ISSUER: 'https://idp.example.com',
          TOOLGATE_OIDC_CLIENT_ID: 'toolgate',
          TOOLGATE_OIDC_CLIENT_SECRET_FILE: fifo,
        },
        'TOOLGATE_OIDC_CLIENT_SECRET_FILE',
      ],
      [
        {
          TOOLGATE_JWT_ISSUER: 'https://idp.example.com',
          TOOLGATE_JWT_AUDIENCE: 'toolgate',
          TOOLGATE_JWKS_FILE: fifo,
        },
        'JWKS file',
      ],
    ];
    for (const [env, name] of variables) {
      assertRefused(await run(serve, { env: { ...token, ...env } }), name, /FIFO/, name);
    }
    assertRefused(
      await run(['secrets', 'set', 'm', '--tool', 'billing'], {
        env: { TOOLGATE_MASTER_KEY_FILE: fifo },
        input: 'a secret value of some length\n',
      }),
      'master key file',
      /FIFO/,
      'TOOLGATE_MASTER_KEY_FILE FIFO',
    );
  });

  test('serve --admin-token-file: a readable FIFO is refused as a FIFO (not told to chmod), a /proc file as a pseudo file', async () => {
    const open = join(dir, 'open-fifo');
    execFileSync('mkfifo', ['-m', '644', open]);
    const serve = ['serve', '--port', '0', '--admin-token-file'];
    const r = await run([...serve, open]);
    assertRefused(r, '--admin-token-file', /FIFO/, 'serve --admin-token-file 0644 FIFO');
    assert.doesNotMatch(r.stdout, /chmod/, 'a FIFO is not a file to chmod');
    // Stats as a regular file of size 0 and reads the process's environment: not a token file.
    assertRefused(
      await run([...serve, '/proc/self/environ']),
      '--admin-token-file',
      /pseudo filesystem/,
      'serve --admin-token-file /proc/self/environ',
    );
    // The same kind of read of a regular file in a real folder gets past the file checks (and is
    // refused for its content: too short for a token).
    const short = join(dir, 'short-token');
    writeFileSync(short, 'abc\n', { mode: 0o600 });
    const ok = await run([...serve, short]);
    assert.equal(ok.code, 2);
    assert.match(ok.stdout, /shorter than/, ok.stdout);
  });

  test('--db sqlite: a file that is not a database is one STORE_UNAVAILABLE line naming --db, not a bug', async () => {
    const junk = join(dir, 'junk.db');
    writeFileSync(junk, Buffer.alloc(64 * 1024, 0x5a));
    const r = await run(['tools', 'list'], { db: `sqlite:${junk}` });
    assert.equal(r.code, 5, r.stdout + r.stderr);
    assert.doesNotMatch(r.stderr, /unexpected error/, r.stderr);
    const body = JSON.parse(r.stdout) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'STORE_UNAVAILABLE');
    assert.match(body.error.message, /not a database.*--db/);
  });

  test('audit export --out: an empty name or a folder holding a bundle is refused; a new folder works', async () => {
    const db = `sqlite:${join(dir, 'export.db')}`;
    const demo = fileURLToPath(new URL('../../demo/catalog.yaml', import.meta.url));
    assertOk(await run(['apply', '-f', demo], { db }), 'a database with its first records');
    const out = join(dir, 'exported-bundle');
    assertOk(await run(['audit', 'export', '--out', out], { db }), 'export to a new folder');
    for (const [target, why] of [
      ['', /name the folder/],
      [out, /already holds an audit bundle/],
    ] as const) {
      const r = await run(['audit', 'export', '--out', target], { db });
      assert.equal(r.code, 2, `--out '${target}': ${r.stdout}`);
      const body = JSON.parse(r.stdout) as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'INPUT_INVALID');
      assert.match(body.error.message, why);
    }
  });
});
