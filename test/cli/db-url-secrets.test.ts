/**
 * A PostgreSQL password in the `--db` URL, in its userinfo (`user:pw@`) or its query (`?password=`),
 * never shows: not in serve's banner (its log), not in backup's and restore's output nor the
 * manifest, not in the arguments of pg_dump and pg_restore (which every user of the host can read
 * in /proc): they get it in PGPASSWORD. A URL holding `sslpassword`, which libpq takes from no
 * variable, is refused for backup and restore before anything runs. A refused sign-in is
 * STORE_UNAVAILABLE (exit 5) naming the cause, without the password. The client tools are the real
 * ones, behind a wrapper on PATH that records the arguments and PGPASSWORD toolgate gave them.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type PasswordDatabase, passwordDatabase } from '../support/backends.js';
import { type CliRun, cleanEnv, ensureBuilt, listeningUrl, MAIN } from '../support/cli.js';

const pgUrl = process.env.TOOLGATE_TEST_PG_URL;
const requirePg = process.env.TOOLGATE_REQUIRE_PG === '1';
const skip = pgUrl || requirePg ? false : 'no PostgreSQL (TOOLGATE_TEST_PG_URL)';

/** The password's own part: found whether a text holds it percent-encoded or not. */
const CANARY = `Pw${randomBytes(8).toString('hex')}`;
/** The password: characters a URL must encode, so both forms are decoded as the driver does. */
const PASSWORD = `${CANARY}&+/ x`;
const enc = encodeURIComponent(PASSWORD);

let dir = '';
/** Where the wrapped client tools write what they were given. */
let toolLog = '';
let toolBin = '';
let source: PasswordDatabase | null = null;
let target: PasswordDatabase | null = null;

/** A wrapper named `tool` that records its arguments and PGPASSWORD, then runs the real one. */
function wrap(tool: string): void {
  const real = execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim();
  const script = join(toolBin, tool);
  writeFileSync(
    script,
    `#!/bin/sh\nprintf '%s\\n' "$@" > "$TG_TOOL_LOG/${tool}.argv"\nprintf '%s' "\${PGPASSWORD-}" > "$TG_TOOL_LOG/${tool}.pgpassword"\nexec ${real} "$@"\n`,
  );
  chmodSync(script, 0o755);
}

before(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-db-secrets-'));
  toolLog = join(dir, 'tool-log');
  toolBin = join(dir, 'bin');
  mkdirSync(toolLog);
  mkdirSync(toolBin);
  if (!pgUrl) return;
  wrap('pg_dump');
  wrap('pg_restore');
  source = await passwordDatabase(pgUrl, PASSWORD);
  target = await passwordDatabase(pgUrl, PASSWORD);
});

after(async () => {
  await source?.drop();
  await target?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

/** The database's URL with the password in its query. */
const inQuery = (db: PasswordDatabase, extra = '') => `${db.url}?password=${enc}${extra}`;
/** The database's URL with the password in its userinfo. */
const inUserinfo = (db: PasswordDatabase) => db.url.replace(`${db.user}@`, `${db.user}:${enc}@`);

function cli(db: string, data: string, args: readonly string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, '--db', db, '--data-dir', data, ...args],
      {
        cwd: dir,
        env: { ...cleanEnv(), PATH: `${toolBin}:${process.env.PATH}`, TG_TOOL_LOG: toolLog },
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

function assertHidden(text: string, where: string): void {
  assert.equal(text.includes(CANARY), false, `the password shows in ${where}:\n${text}`);
}

/** What the wrapped `tool` was given: its arguments and PGPASSWORD; null when it did not run. */
function given(tool: string): { argv: string; pgpassword: string } | null {
  const argv = join(toolLog, `${tool}.argv`);
  if (!existsSync(argv)) return null;
  const seen = {
    argv: readFileSync(argv, 'utf8'),
    pgpassword: readFileSync(join(toolLog, `${tool}.pgpassword`), 'utf8'),
  };
  rmSync(argv);
  return seen;
}

test('serve shows the database with ?password= masked, and the password nowhere in its output', {
  skip,
}, async () => {
  assert.ok(source, 'TOOLGATE_REQUIRE_PG=1 but TOOLGATE_TEST_PG_URL is not set');
  const server = spawn(
    process.execPath,
    [MAIN, '--db', inQuery(source), '--data-dir', join(dir, 'serve'), 'serve', '--port', '0'],
    { cwd: dir, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  server.stdout?.on('data', (c: Buffer) => {
    output += c.toString();
  });
  server.stderr?.on('data', (c: Buffer) => {
    output += c.toString();
  });
  const exited = new Promise((resolve) => server.once('exit', resolve));
  try {
    await listeningUrl(server);
  } finally {
    server.kill('SIGTERM');
    await exited;
  }
  assert.match(
    output,
    new RegExp(`database: +postgres://${source.user}@[^ ]+\\?password=\\*\\*\\*`),
  );
  assertHidden(output, "serve's output");
});

test('backup and restore: the password, in the query or the userinfo, reaches pg_dump and pg_restore in PGPASSWORD only, never their arguments, the output or the manifest', {
  skip,
}, async () => {
  assert.ok(source && target, 'TOOLGATE_REQUIRE_PG=1 but TOOLGATE_TEST_PG_URL is not set');
  const live = join(dir, 'live');
  const made = await cli(inQuery(source), live, ['agents', 'create', 'support-bot']);
  assert.equal(made.code, 0, made.stderr);

  const bk = join(dir, 'bk');
  const backedUp = await cli(inQuery(source, '&application_name=tg'), live, ['backup', bk]);
  assert.equal(backedUp.code, 0, backedUp.stdout + backedUp.stderr);
  assertHidden(backedUp.stdout + backedUp.stderr, "backup's output");
  assert.match(
    backedUp.stdout,
    /^backed up postgres:\/\/\S+\?password=\*\*\*&application_name=tg /,
  );
  const manifest = readFileSync(join(bk, 'manifest.json'), 'utf8');
  assertHidden(manifest, 'manifest.json');
  assert.match(
    (JSON.parse(manifest) as { location: string }).location,
    /\?password=\*\*\*&application_name=tg$/,
  );
  const dump = given('pg_dump');
  assert.ok(dump, 'pg_dump ran');
  assertHidden(dump.argv, "pg_dump's arguments");
  assert.match(dump.argv, /^--dbname=postgres:\/\/tgpw_\w+@[^?\s]+\?application_name=tg$/m);
  assert.equal(dump.pgpassword, PASSWORD);

  const restored = await cli(inUserinfo(target), join(dir, 'restored'), ['restore', bk]);
  assert.equal(restored.code, 0, restored.stdout + restored.stderr);
  assertHidden(restored.stdout + restored.stderr, "restore's output");
  assert.match(restored.stdout, /database into postgres:\/\/tgpw_\w+:\*\*\*@/);
  const load = given('pg_restore');
  assert.ok(load, 'pg_restore ran');
  assertHidden(load.argv, "pg_restore's arguments");
  assert.equal(load.pgpassword, PASSWORD);

  // The restored database is the backed-up one: its agent is there.
  const agents = await cli(inQuery(target), join(dir, 'restored'), ['--json', 'agents', 'list']);
  assert.equal(agents.code, 0, agents.stderr);
  assert.match(agents.stdout, /support-bot/);

  // Without pg_dump: the command printed for a person to run holds no secret either.
  const noDump = await new Promise<CliRun>((resolve) =>
    execFile(
      process.execPath,
      [
        MAIN,
        '--db',
        inQuery(source as PasswordDatabase),
        '--data-dir',
        live,
        'backup',
        join(dir, 'bk2'),
      ],
      { cwd: dir, env: { ...cleanEnv(), PATH: '/nonexistent' } },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
  assert.equal(noDump.code, 5, noDump.stdout + noDump.stderr);
  assert.match(noDump.stdout, /pg_dump --format=custom .* --dbname='postgres:\/\/tgpw_\w+@[^?']+'/);
  assertHidden(noDump.stdout + noDump.stderr, 'the printed pg_dump command');
});

test('a URL holding sslpassword is refused for backup and restore before anything runs; nothing shows it', {
  skip,
}, async () => {
  assert.ok(source && target, 'TOOLGATE_REQUIRE_PG=1 but TOOLGATE_TEST_PG_URL is not set');
  const url = `${inQuery(source)}&sslpassword=${enc}`;
  const bk = join(dir, 'bk-ssl');
  const run = await cli(url, join(dir, 'live'), ['backup', bk]);
  assert.equal(run.code, 2, run.stdout + run.stderr);
  assert.match(run.stderr, /^error INPUT_INVALID: the database URL holds sslpassword/);
  assertHidden(run.stdout + run.stderr, "a refused backup's output");
  assert.equal(given('pg_dump'), null, 'pg_dump never ran');
  assert.ok(!existsSync(bk) || readdirSync(bk).length === 0, 'nothing written');

  const restore = await cli(`${inQuery(target)}&sslpassword=${enc}`, join(dir, 'r-ssl'), [
    'restore',
    join(dir, 'bk'),
  ]);
  assert.equal(restore.code, 2, restore.stdout + restore.stderr);
  assertHidden(restore.stdout + restore.stderr, "a refused restore's output");
  assert.equal(given('pg_restore'), null, 'pg_restore never ran');
});

test('a wrong password is STORE_UNAVAILABLE (exit 5) naming the cause; the right one opens', {
  skip,
}, async () => {
  assert.ok(source, 'TOOLGATE_REQUIRE_PG=1 but TOOLGATE_TEST_PG_URL is not set');
  const wrong = `${source.url}?password=${enc}x`;
  const human = await cli(wrong, join(dir, 'live'), ['agents', 'list']);
  assert.equal(human.code, 5, human.stdout + human.stderr);
  assert.match(human.stderr, /^error STORE_UNAVAILABLE: .*credentials.*\(SQLSTATE 28P01\)$/m);
  assertHidden(human.stdout + human.stderr, 'the refusal');
  const json = await cli(wrong, join(dir, 'live'), ['--json', 'agents', 'list']);
  assert.equal(json.code, 5);
  assert.equal(
    (JSON.parse(json.stdout) as { error: { code: string } }).error.code,
    'STORE_UNAVAILABLE',
  );
  assertHidden(json.stdout + json.stderr, 'the refusal as JSON');

  const right = await cli(inQuery(source), join(dir, 'live'), ['agents', 'list']);
  assert.equal(right.code, 0, right.stderr);
});
