/**
 * The CLI beside a running `serve` on SQLite, and its answers to ordinary mistakes: a command
 * whose write meets the gateway's database locked waits for the lock (busy timeout, `begin
 * immediate`) and succeeds instead of failing "database is locked" with a stack trace; a missing
 * file, a directory, bad YAML, an unreachable database, a bad database URL and bad flags are each
 * one clear line and exit by class (2 usage, 3 refused, 5 unavailable) — never a stack trace.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import {
  type CliRun,
  cleanEnv,
  ensureBuilt,
  folderArgs,
  listeningUrl,
  runCli,
  spawnServe,
} from '../support/cli.js';

const STACK = /\n\s+at /;

/** Starts the CLI; `opened` settles once the child has the database file open. */
function startCli(dir: string, args: readonly string[]) {
  let pid = 0;
  const done = new Promise<CliRun>((resolve) => {
    const child = execFile(
      process.execPath,
      [...folderArgs(dir), ...args],
      { cwd: dir, env: cleanEnv() },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    pid = child.pid ?? 0;
  });
  const db = join(dir, 'tg.db');
  const opened = (async () => {
    for (let i = 0; i < 1200; i++) {
      try {
        if (readdirSync(`/proc/${pid}/fd`).some((fd) => safeLink(`/proc/${pid}/fd/${fd}`) === db))
          return;
      } catch {
        // not started yet, or gone
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('the CLI never opened the database');
  })();
  return { done, opened };
}

function safeLink(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return '';
  }
}

describe('the CLI beside a running serve on SQLite', () => {
  let dir: string;
  let server: ChildProcess;

  before(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'toolgate-cli-lock-'));
    server = spawnServe(dir);
    await listeningUrl(server);
  });
  after(() => {
    server?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  test('a write that meets the database locked waits for the lock and succeeds, with no stack trace', async () => {
    // Another writer holds the write lock (as the gateway's commit does) and commits a change
    // while the CLI's command is under way: the CLI's transaction must wait, not fail.
    const holder = new BetterSqlite3(join(dir, 'tg.db'));
    holder.pragma('busy_timeout = 10000');
    holder.exec('begin immediate');
    holder
      .prepare(
        "insert into meta(key, value) values ('lock-test', '1') on conflict(key) do update set value = excluded.value",
      )
      .run();
    const create = startCli(dir, ['agents', 'create', 'lock-bot', '--owner', 'qa']);
    const list = startCli(dir, ['agents', 'list']);
    try {
      await create.opened;
      // The command has the database open and reaches its write while the lock is held.
      await new Promise((r) => setTimeout(r, 3000));
    } finally {
      holder.exec('commit');
      holder.close();
    }
    const created = await create.done;
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /created agent lock-bot/);
    assert.doesNotMatch(created.stderr, /database is locked|INTERNAL/);
    assert.doesNotMatch(created.stderr, STACK);
    const listed = await list.done;
    assert.equal(listed.code, 0, listed.stderr);
    // The benign neighbour: with nothing holding the lock the same kind of command just runs.
    const again = await runCli(dir, ['agents', 'create', 'free-bot', '--owner', 'qa']);
    assert.equal(again.code, 0, again.stderr);
  });

  test('ordinary mistakes are one clear line and exit by class, never a stack trace', async () => {
    writeFileSync(join(dir, 'bad.yaml'), 'kind: [unclosed\n  - : :');
    const cases: [string[], RegExp, number][] = [
      [
        ['apply', '-f', 'missing.yaml'],
        /INPUT_INVALID: cannot read -f missing\.yaml: no such file/,
        2,
      ],
      [['apply', '-f', dir], /INPUT_INVALID: cannot read -f .*: is a directory/, 2],
      [['apply', '-f', join(dir, 'bad.yaml')], /INPUT_MALFORMED/, 2],
      [['--db', 'postgres://u:p@127.0.0.1:1/x', 'tools', 'list'], /STORE_UNAVAILABLE/, 5],
      [
        ['--db', 'sqlite:/dev/null/x/tg.db', 'tools', 'list'],
        /INPUT_INVALID: cannot create folder \/dev\/null\/x/,
        2,
      ],
      [['--db', 'mysql://x', 'tools', 'list'], /unsupported database URL/, 2],
      [['tools', 'list', '--limit', 'abc'], /must be an integer/, 2],
      [['tools', 'list', '--bogus'], /unknown option/, 2],
      [['--token-file', 'missing-token', 'tools', 'list'], /UNAUTHENTICATED: cannot read/, 3],
    ];
    for (const [args, expected, exit] of cases) {
      const run = await runCli(dir, args);
      assert.equal(run.code, exit, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, expected, args.join(' '));
      assert.doesNotMatch(run.stderr + run.stdout, STACK, `${args.join(' ')} printed a stack`);
      const json = await runCli(dir, ['--json', ...args]);
      assert.equal(json.code, exit);
      assert.doesNotMatch(json.stderr + json.stdout, STACK);
    }
  });
});
