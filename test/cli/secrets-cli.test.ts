/**
 * `toolgate secrets` as an admin runs it (C11): the built CLI in a real child process,
 * a real database on every backend. Values come from stdin or a file, never argv; no command
 * prints a value; the master key is created 0600 beside the database and a wrong one is refused
 * clearly; `apply -f` refuses kind Secret.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { backends } from '../support/backends.js';
import { cleanEnv, ensureBuilt, MAIN } from '../support/cli.js';

const VALUE = 'cli-secret-value-4f9a2b7c1d';
const NEXT = 'cli-secret-rotated-8e3d6a0b5c';
const FROM_FILE = 'cli-secret-from-file-2c7e9f1a';

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(
  cwd: string,
  args: readonly string[],
  options: { input?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [MAIN, ...args],
      { cwd, env: { ...cleanEnv(), ...options.env }, timeout: 20_000 },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') {
          reject(new Error(`toolgate ${args.join(' ')} did not run: ${err.message}\n${stderr}`));
          return;
        }
        resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
      },
    );
    child.stdin?.end(options.input ?? '');
  });
}

for (const backend of backends()) {
  describe(`toolgate secrets on ${backend.name}`, () => {
    let cwd: string;
    let db: string;
    let drop: () => Promise<void>;
    const outputs: string[] = [];
    // Argument parsing and apply -f do not depend on the backend; run them once, on SQLite.
    const backendIndependent = backend.name === 'sqlite' ? false : 'checked on sqlite';

    async function cli(
      args: readonly string[],
      options: { input?: string; env?: NodeJS.ProcessEnv } = {},
    ) {
      const r = await run(cwd, ['--db', db, ...args], options);
      outputs.push(r.stdout, r.stderr);
      return r;
    }
    // biome-ignore lint/suspicious/noExplicitAny: JSON output is asserted field by field
    async function json(args: readonly string[], input?: string): Promise<any> {
      const r = await cli(['--json', ...args], input !== undefined ? { input } : {});
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      return JSON.parse(r.stdout);
    }

    before(async () => {
      ensureBuilt();
      cwd = mkdtempSync(join(tmpdir(), 'toolgate-secrets-cli-'));
      const fresh = await backend.fresh();
      db = fresh.url;
      drop = fresh.drop;
    });
    after(async () => {
      await drop();
      rmSync(cwd, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    });

    test('set reads the value from stdin, prints no value, and creates data/master.key 0600', async () => {
      const out = await json(['secrets', 'set', 'stripe', '--tool', 'billing'], `${VALUE}\n`);
      assert.equal(out.secret.version, 1);
      assert.equal(out.secret.environment, 'default');
      assert.equal(out.secret.created_by, 'admin-token');
      const keyFile = join(cwd, 'data', 'master.key');
      assert.equal(statSync(keyFile).mode & 0o777, 0o600);
      assert.equal(out.secret.key_id.length, 16);
    });

    test('set --from-file reads a file; --env makes a separate secret', {
      skip: backendIndependent,
    }, async () => {
      const file = join(cwd, 'value.txt');
      writeFileSync(file, FROM_FILE, { mode: 0o600 });
      const out = await json([
        'secrets',
        'set',
        'stripe',
        '--tool',
        'billing',
        '--env',
        'staging',
        '--from-file',
        file,
      ]);
      assert.equal(out.secret.environment, 'staging');
    });

    test('a value given on the command line is refused and nothing is written', {
      skip: backendIndependent,
    }, async () => {
      const attempts = [
        ['secrets', 'set', 'argv', '--tool', 'billing', VALUE],
        ['secrets', 'set', 'argv', '--tool', 'billing', '--value', VALUE],
      ];
      for (const args of attempts) {
        const r = await cli(args, { input: '' });
        assert.equal(r.code, 2, args.join(' '));
      }
      const list = await json(['secrets', 'list']);
      assert.equal(
        list.secrets.some((s: { name: string }) => s.name === 'argv'),
        false,
      );
    });

    test('an empty or short value on stdin is refused with a clear error', {
      skip: backendIndependent,
    }, async () => {
      const r = await cli(['secrets', 'set', 'empty', '--tool', 'billing'], { input: '' });
      assert.equal(r.code, 2);
      assert.match(r.stderr, /INPUT_INVALID.*at least 8 characters/);
    });

    test('set of an existing secret is refused: rotate is the way', {
      skip: backendIndependent,
    }, async () => {
      const r = await cli(['--json', 'secrets', 'set', 'stripe', '--tool', 'billing'], {
        input: NEXT,
      });
      assert.equal(r.code, 3);
      assert.equal(JSON.parse(r.stdout).error.code, 'SECRET_EXISTS');
    });

    test('list prints names, environments, versions, dates and key ids, never values (text and JSON)', async () => {
      const text = await cli(['secrets', 'list']);
      assert.equal(text.code, 0);
      assert.match(text.stdout, /TOOL\s+NAME\s+ENV\s+VERSION\s+CREATED\s+ROTATED\s+KEY ID/);
      assert.match(text.stdout, /billing\s+stripe\s+default\s+1\s/);
      const list = await json(['secrets', 'list', '--env', 'default']);
      assert.equal(list.secrets.length, 1);
      assert.equal('value' in list.secrets[0], false);
    });

    test('rotate reads the new value from stdin and bumps the version', async () => {
      const out = await json(['secrets', 'rotate', 'stripe', '--tool', 'billing'], NEXT);
      assert.equal(out.secret.version, 2);
      assert.ok(out.secret.rotated_at);
      const missing = await cli(['--json', 'secrets', 'rotate', 'nope', '--tool', 'billing'], {
        input: NEXT,
      });
      assert.equal(JSON.parse(missing.stdout).error.code, 'SECRET_NOT_FOUND');
    });

    test('a wrong master key is refused by name (key ids) and changes nothing', async () => {
      const other = randomBytes(32).toString('base64');
      const wrong = await cli(['--json', 'secrets', 'rotate', 'stripe', '--tool', 'billing'], {
        input: VALUE,
        env: { TOOLGATE_MASTER_KEY: other },
      });
      assert.equal(wrong.code, 5);
      const error = JSON.parse(wrong.stdout).error;
      assert.equal(error.code, 'MASTER_KEY_INVALID');
      assert.equal(error.details.reason, 'wrong_key');
      assert.match(error.message, /sealed with master key [0-9a-f]{16}/);
      // Nothing changed: still version 2 under the original key.
      const list = await json(['secrets', 'list', '--env', 'default']);
      assert.deepEqual(
        list.secrets.map((s: { name: string; version: number }) => `${s.name}@${s.version}`),
        ['stripe@2'],
      );
    });

    test('a master key of the wrong length says so', { skip: backendIndependent }, async () => {
      const short = await cli(['secrets', 'set', 'x-key', '--tool', 'billing'], {
        input: VALUE,
        env: { TOOLGATE_MASTER_KEY: randomBytes(16).toString('base64') },
      });
      assert.equal(short.code, 5);
      assert.match(short.stderr, /MASTER_KEY_INVALID.*16 bytes; it must be 32 bytes/);
    });

    test('delete removes it; events record set, rotate and delete without the value', async () => {
      const out = await json(['secrets', 'delete', 'stripe', '--tool', 'billing']);
      assert.equal(out.deleted.version, 2);
      assert.equal((await json(['secrets', 'list', '--env', 'default'])).secrets.length, 0);
      const events = await json(['events', 'list']);
      const actions = events.events.map((e: { action: string }) => e.action);
      for (const a of ['secret.set', 'secret.rotate', 'secret.delete'])
        assert.ok(actions.includes(a), a);
    });

    test('apply -f refuses kind Secret and points at the CLI and API', {
      skip: backendIndependent,
    }, async () => {
      const file = join(cwd, 'secret.yaml');
      writeFileSync(file, `kind: Secret\nspec:\n  name: stripe\n  value: ${VALUE}\n`);
      const r = await cli(['--json', 'apply', '-f', file]);
      assert.equal(r.code, 2);
      const error = JSON.parse(r.stdout).error;
      assert.equal(error.code, 'CONFIG_INVALID');
      assert.equal(error.details.problems[0].rule, 'config.kind.secret');
      assert.match(error.details.problems[0].message, /toolgate secrets set.*\/v1\/secrets/);
    });

    test('no output of any command, and no database file, holds a value', () => {
      const all = outputs.join('\n');
      for (const v of [VALUE, NEXT, FROM_FILE]) {
        assert.equal(all.includes(v), false, `output holds ${v}`);
        assert.equal(all.includes(Buffer.from(v).toString('base64')), false);
      }
      if (backend.name !== 'sqlite') return;
      const dir = join(db.slice('sqlite:'.length), '..');
      for (const f of readdirSync(dir)) {
        const bytes = readFileSync(join(dir, f));
        for (const v of [VALUE, NEXT, FROM_FILE]) {
          assert.equal(bytes.includes(Buffer.from(v)), false, `${f} holds ${v}`);
        }
      }
    });
  });
}
