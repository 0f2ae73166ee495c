/**
 * The built `toolgate` command's exit codes by class (src/edge/cli/exit-codes.ts, documented in
 * docs/cli-reference.md "Exit codes"): 0 done, 1 a bug, 2 usage, 3 refused, 4 not found,
 * 5 unavailable, 6 verification failed — each beside a benign neighbour, none with a stack trace
 * (a bug's stack only with TOOLGATE_DEBUG=1). Then the whole command tree: every command takes
 * the global --json and answers with JSON on stdout (`mcp`: on stderr, its stdout is JSON-RPC's).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES } from '../../src/core/index.js';
import { EXIT_CLASS_OF_CODE, EXIT_CLASSES } from '../../src/edge/cli/exit-codes.js';
import { type CliRun, cleanEnv, ensureBuilt, MAIN, ROOT, runCli } from '../support/cli.js';
import type { TreeRun } from '../support/cli-json-tree.js';

const STACK = /\n\s+at /;
let dir: string;

before(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-exit-'));
  writeFileSync(join(dir, 'not-a-db'), 'this is no database\n');
  // The benign start: a fresh folder, its database and data folder (with the audit key) made.
  const first = await runCli(dir, ['audit', 'checkpoint']);
  assert.equal(first.code, 0, first.stderr);
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** The CLI with `node` flags before it (a module that plants a bug). */
function runWith(nodeFlags: readonly string[], args: readonly string[], env = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [
        ...nodeFlags,
        MAIN,
        '--db',
        `sqlite:${join(dir, 'tg.db')}`,
        '--data-dir',
        join(dir, 'data'),
        ...args,
      ],
      { cwd: dir, env: { ...cleanEnv(), ...env } },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A module loaded before the CLI that throws (or rejects unawaited) when "no tools" is printed. */
function plantedBug(how: 'throw' | 'reject'): string[] {
  const act =
    how === 'throw'
      ? 'throw new Error("planted bug")'
      : 'Promise.reject(new Error("planted stray"))';
  const source = `const w = process.stdout.write.bind(process.stdout); process.stdout.write = (c, ...a) => { if (String(c).includes('no tools')) { ${act}; } return w(c, ...a); };`;
  return ['--import', `data:text/javascript,${encodeURIComponent(source)}`];
}

/**
 * The module loaders of this process (`--import tsx` when the tests run on the sources), without
 * the rest of what the test runner gives its children.
 */
function loaderFlags(execArgv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const flag = execArgv[i] ?? '';
    if (flag === '--import' || flag === '--require') out.push(flag, execArgv[++i] ?? '');
    else if (/^--(import|require)=/.test(flag)) out.push(flag);
  }
  return out;
}

function errorOf(run: CliRun): { code: string; message: string } {
  return (JSON.parse(run.stdout) as { error: { code: string; message: string } }).error;
}

test('every catalogue code has an exit class, and the classes keep their numbers', () => {
  assert.deepEqual(Object.keys(EXIT_CLASS_OF_CODE).sort(), Object.keys(ERROR_CODES).sort());
  assert.deepEqual(Object.fromEntries(Object.entries(EXIT_CLASSES).map(([k, v]) => [k, v.exit])), {
    ok: 0,
    internal: 1,
    usage: 2,
    refused: 3,
    not_found: 4,
    unavailable: 5,
    verification_failed: 6,
  });
});

test('each class exits with its code beside a benign neighbour, and none prints a stack trace', async () => {
  const dataDir = join(dir, 'data');
  const damagedKeys = join(dir, 'damaged-keys');
  mkdirSync(damagedKeys);
  writeFileSync(join(damagedKeys, 'audit-signing-key.pem'), 'not a key\n', { mode: 0o600 });
  chmodSync(join(damagedKeys, 'audit-signing-key.pem'), 0o600);
  const notADb = ['--db', `sqlite:${join(dir, 'not-a-db')}`];
  const cases: {
    name: string;
    run: Promise<CliRun>;
    code: number;
    error?: string;
    err?: RegExp;
  }[] = [
    { name: 'ok', run: runCli(dir, ['--json', 'tools', 'list']), code: 0 },
    { name: 'ok: verify', run: runCli(dir, ['audit', 'verify']), code: 0 },
    {
      name: 'usage: a bad option value',
      run: runCli(dir, ['--json', 'tools', 'list', '--limit', 'abc']),
      code: 2,
      error: 'INPUT_INVALID',
    },
    {
      name: 'usage: a group without its command',
      run: runCli(dir, ['--json', 'tools']),
      code: 2,
      error: 'INPUT_INVALID',
    },
    {
      name: 'usage: a missing file',
      run: runCli(dir, ['apply', '-f', 'missing.yaml']),
      code: 2,
      err: /INPUT_INVALID: cannot read -f missing\.yaml/,
    },
    {
      name: 'usage: a damaged key file',
      run: runCli(dir, ['--data-dir', damagedKeys, 'audit', 'checkpoint']),
      code: 2,
      err: /audit-signing-key\.pem holds no usable private key/,
    },
    {
      name: 'refused: a token that is no token',
      run: runCli(dir, ['--json', 'tools', 'list'], { TOOLGATE_TOKEN: 'tgo_not-a-token' }),
      code: 3,
      error: 'UNAUTHENTICATED',
    },
    {
      name: 'not found',
      run: runCli(dir, ['--json', 'tools', 'show', 'nosuch@1.0.0']),
      code: 4,
      error: 'TOOL_NOT_FOUND',
    },
    {
      name: 'unavailable: a file that is no database',
      run: runCli(dir, [...notADb, 'tools', 'list']),
      code: 5,
      err: /STORE_UNAVAILABLE: the database cannot be read/,
    },
    {
      name: 'unavailable: a database server that does not answer',
      run: runCli(dir, ['--json', '--db', 'postgres://u:p@127.0.0.1:1/x', 'tools', 'list']),
      code: 5,
      error: 'STORE_UNAVAILABLE',
    },
    {
      name: 'verification failed: audit verify on a damaged database',
      run: runCli(dir, [...notADb, '--data-dir', dataDir, 'audit', 'verify']),
      code: 6,
      err: /^$/,
    },
    {
      name: 'internal: a bug',
      run: runWith(plantedBug('throw'), ['tools', 'list']),
      code: 1,
      err: /^toolgate: unexpected error: planted bug \(a bug: TOOLGATE_DEBUG=1 prints its stack; please report it\)\n$/,
    },
    {
      name: 'internal: a rejection nobody awaited',
      run: runWith(plantedBug('reject'), ['tools', 'list']),
      code: 1,
      err: /^toolgate: unexpected error: planted stray \(a bug/,
    },
  ];
  const runs = await Promise.all(cases.map((c) => c.run));
  for (const [i, c] of cases.entries()) {
    const run = runs[i] as CliRun;
    assert.equal(run.code, c.code, `${c.name}: ${run.stdout}${run.stderr}`);
    assert.doesNotMatch(run.stdout + run.stderr, STACK, `${c.name} printed a stack`);
    if (c.error !== undefined) assert.equal(errorOf(run).code, c.error, c.name);
    if (c.err !== undefined) assert.match(run.stderr, c.err, c.name);
  }
  assert.match(runs[10]?.stdout ?? '', /^FAILED: /, 'verify reports what it found');
  // The bug's stack is there for whoever asks for it.
  const debug = await runWith(plantedBug('throw'), ['tools', 'list'], { TOOLGATE_DEBUG: '1' });
  assert.equal(debug.code, 1);
  assert.match(debug.stderr, /unexpected error: Error: planted bug\n\s+at /);
});

test('every command takes the global --json and answers with JSON, never a stack trace', async () => {
  // One process walks the whole tree (src/edge/cli/program.ts, run as the CLI runs it) against a
  // file that is no database: each command prints its result or its refusal as JSON.
  const child = fileURLToPath(
    new URL(
      `../support/cli-json-tree${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`,
      import.meta.url,
    ),
  );
  const runs = await new Promise<TreeRun[]>((resolve, reject) => {
    execFile(
      process.execPath,
      [...loaderFlags(process.execArgv), child, dir],
      { cwd: ROOT, env: cleanEnv(), maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) =>
        err
          ? reject(new Error(`${err.message}\n${stderr}`))
          : resolve(JSON.parse(stdout) as TreeRun[]),
    );
  });
  assert.ok(runs.length >= 70, `${runs.length} commands walked`);
  for (const run of runs) {
    // `mcp` keeps stdout for JSON-RPC: its refusal is JSON on stderr.
    const text = run.command === 'mcp' ? run.stderr : run.stdout;
    let parsed: unknown;
    assert.doesNotThrow(
      () => {
        parsed = JSON.parse(text);
      },
      `${run.command} (${run.args.join(' ')}) printed no JSON: ${run.stdout}${run.stderr}`,
    );
    assert.equal(typeof parsed, 'object', run.command);
    assert.doesNotMatch(run.stdout + run.stderr, STACK, `${run.command} printed a stack`);
    const error = (parsed as { error?: { code?: string } }).error;
    if (run.code !== 0 && run.command !== 'audit verify') {
      assert.equal(
        typeof error?.code,
        'string',
        `${run.command} exited ${run.code} without an error`,
      );
    }
  }
});
