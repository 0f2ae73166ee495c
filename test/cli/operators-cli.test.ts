/**
 * The CLI authenticates its operator: without a token it is the bootstrap operator (while the
 * admin token is enabled), with TOOLGATE_TOKEN or --token-file it is the token's operator, checked
 * against the database it opens, and what it does is recorded as that operator. A disabled
 * bootstrap token, a bad token and a missing role are refused with structured errors. The built
 * CLI in real child processes on a real SQLite file.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cleanEnv, ensureBuilt, folderArgs } from '../support/cli.js';

interface Run {
  code: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON output is asserted field by field
  json: any;
  stderr: string;
}

function run(dir: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...folderArgs(dir), '--json', ...args],
      { cwd: dir, env: { ...cleanEnv(), ...env } },
      (err, stdout, stderr) => {
        let json: unknown = null;
        try {
          json = JSON.parse(stdout);
        } catch {
          json = stdout;
        }
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, json, stderr });
      },
    );
  });
}

describe('the CLI acts as an authenticated operator', () => {
  let dir: string;
  let rootToken = '';
  let auditorToken = '';

  before(() => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'toolgate-operators-cli-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

  test('without a token it is the bootstrap operator: it creates the first admin and issues their token', async () => {
    const who = await run(dir, ['operators', 'whoami']);
    assert.equal(who.code, 0, who.stderr);
    assert.equal(who.json.id, 'admin-token');
    assert.equal(who.json.authenticated_by, 'bootstrap');
    const created = await run(dir, ['operators', 'create', 'root', '--roles', 'admin']);
    assert.equal(created.code, 0, JSON.stringify(created.json));
    assert.equal(created.json.created_by, 'admin-token');
    const issued = await run(dir, [
      'operators',
      'token',
      'issue',
      '--for',
      'root',
      '--name',
      'cli',
      '--days',
      '7',
    ]);
    assert.equal(issued.code, 0, JSON.stringify(issued.json));
    assert.match(issued.json.token, /^tgo_/);
    rootToken = issued.json.token;
  });

  test("with TOOLGATE_TOKEN it is the token's operator, and its actions are recorded as them", async () => {
    const env = { TOOLGATE_TOKEN: rootToken };
    const who = await run(dir, ['operators', 'whoami'], env);
    assert.deepEqual(who.json, {
      id: 'root',
      name: 'root',
      roles: ['admin'],
      teams: [],
      authenticated_by: 'personal-token',
    });
    const made = await run(dir, ['operators', 'create', 'audrey', '--roles', 'auditor'], env);
    assert.equal(made.code, 0, JSON.stringify(made.json));
    assert.equal(made.json.created_by, 'operator:root');
    const agent = await run(dir, ['agents', 'create', 'helper-bot', '--owner', 'qa'], env);
    assert.equal(agent.code, 0, JSON.stringify(agent.json));
    const events = await run(dir, ['events', 'list', '--subject', 'agent:helper-bot'], env);
    const actors = new Set(
      (events.json.events as { actor: string; via: string }[]).map((e) => `${e.actor} ${e.via}`),
    );
    assert.deepEqual([...actors], ['operator:root cli']);
    const issued = await run(
      dir,
      ['operators', 'token', 'issue', '--for', 'audrey', '--name', 'ro', '--days', '1'],
      env,
    );
    auditorToken = issued.json.token;
  });

  test('--token-file works like TOOLGATE_TOKEN; a bad or unreadable token is refused', async () => {
    const file = join(dir, 'token');
    writeFileSync(file, `${auditorToken}\n`, { mode: 0o600 });
    const who = await run(dir, ['--token-file', file, 'operators', 'whoami']);
    assert.equal(who.json.id, 'audrey');
    const bad = await run(dir, ['operators', 'whoami'], {
      TOOLGATE_TOKEN: `tgo_${'x'.repeat(43)}`,
    });
    assert.equal(bad.code, 3);
    assert.equal(bad.json.error.code, 'UNAUTHENTICATED');
    assert.match(bad.json.error.message, /not a valid personal operator token/);
    const missing = await run(dir, ['--token-file', join(dir, 'nope'), 'operators', 'whoami']);
    assert.equal(missing.json.error.code, 'UNAUTHENTICATED');
  });

  test("an auditor's token cannot run an admin command, and nothing is written", async () => {
    const env = { TOOLGATE_TOKEN: auditorToken };
    const refused = await run(dir, ['operators', 'create', 'mallory', '--roles', 'admin'], env);
    assert.equal(refused.code, 3);
    assert.equal(refused.json.error.code, 'FORBIDDEN');
    assert.deepEqual(refused.json.error.details, { roles: ['admin'] });
    const grant = await run(dir, ['agents', 'create', 'evil-bot'], env);
    assert.equal(grant.json.error.code, 'FORBIDDEN');
    // Read-only commands are the auditor's.
    const tools = await run(dir, ['tools', 'list'], env);
    assert.equal(tools.code, 0, JSON.stringify(tools.json));
    const list = await run(dir, ['operators', 'list'], env);
    assert.equal(list.code, 0, JSON.stringify(list.json));
    assert.deepEqual(
      list.json.operators.map((o: { id: string }) => o.id),
      ['audrey', 'root'],
    );
  });

  test('a disabled account is refused at once; a disabled bootstrap token is refused with a clear message', async () => {
    const off = await run(dir, ['operators', 'disable', 'audrey'], { TOOLGATE_TOKEN: rootToken });
    assert.equal(off.code, 0, JSON.stringify(off.json));
    const gone = await run(dir, ['operators', 'whoami'], { TOOLGATE_TOKEN: auditorToken });
    assert.equal(gone.json.error.code, 'UNAUTHENTICATED');
    const disabled = await run(dir, ['tools', 'list'], { TOOLGATE_ADMIN_TOKEN: 'disabled' });
    assert.equal(disabled.code, 3);
    assert.equal(disabled.json.error.code, 'UNAUTHENTICATED');
    assert.match(disabled.json.error.message, /bootstrap admin token is disabled/);
    // A personal token still works with the bootstrap token disabled.
    const ok = await run(dir, ['tools', 'list'], {
      TOOLGATE_ADMIN_TOKEN: 'disabled',
      TOOLGATE_TOKEN: rootToken,
    });
    assert.equal(ok.code, 0, JSON.stringify(ok.json));
  });
});
