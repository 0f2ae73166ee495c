/**
 * The demo's sandboxed `read_file` as a newcomer meets it: `toolgate serve --demo`, the ops agent's
 * key from the CLI, calls over REST. A file of the shipped workspace is read (the tool runs in the
 * namespace sandbox, which sees the workspace read-only); every way out of the workspace is denied
 * by the gate's path policy before anything runs, and the tool itself cannot see the host.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ensureBuilt, listeningUrl, ROOT, runCli, spawnServe } from '../support/cli.js';
import { approveInFolder } from '../support/operators.js';

let dir: string;
let server: ChildProcess;
let base = '';
let apiKey = '';
let session = '';

const cli = (args: readonly string[]) => runCli(dir, args);

async function call(tool: string, args: unknown, key = apiKey, sid = session) {
  const res = await fetch(`${base}/v1/sessions/${sid}/calls`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tool, arguments: args }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function openSession(key: string): Promise<string> {
  const res = await fetch(`${base}/v1/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: '{}',
  });
  return ((await res.json()) as { id: string }).id;
}

before(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-demo-tools-'));
  server = spawnServe(dir);
  base = await listeningUrl(server);
  const created = await cli(['--json', 'agents', 'create', 'ops-bot']);
  assert.equal(created.code, 0, created.stderr);
  apiKey = (JSON.parse(created.stdout) as { api_key: string }).api_key;
  session = await openSession(apiKey);
});

after(async () => {
  // The server writes its last checkpoint as it stops: remove its folder only once it is gone.
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

test('read_file reads a file of the demo workspace, inside its sandbox', async () => {
  const { status, body } = await call('read_file', { path: 'runbooks/refunds.md' });
  assert.equal(status, 200, JSON.stringify(body));
  const output = body.output as { content: string; bytes: number };
  assert.match(output.content, /^# Refunds runbook/);
  assert.equal(output.bytes, Buffer.byteLength(output.content));
  // A path that wanders but stays inside the workspace is the same file.
  const again = await call('read_file', { path: 'policies/../runbooks/./refunds.md' });
  assert.equal(again.status, 200, JSON.stringify(again.body));
});

test('every way out of the workspace is denied by the path policy, before anything runs', async () => {
  for (const path of [
    '../catalog.yaml',
    '../tools/read-file.mjs',
    'runbooks/../../catalog.yaml',
    '/etc/passwd',
    `${ROOT}demo/catalog.yaml`,
    'runbooks/refunds.md\u0000.txt',
  ]) {
    const { status, body } = await call('read_file', { path });
    assert.equal(status, 403, `${JSON.stringify(path)}: ${JSON.stringify(body)}`);
    assert.equal(body.code, 'POLICY_DENIED', JSON.stringify(path));
  }
});

test('a file that is not there is the tool failing, not a leak of what exists elsewhere', async () => {
  const { status, body } = await call('read_file', { path: 'runbooks/missing.md' });
  assert.equal(status, 502, JSON.stringify(body));
  assert.equal(body.code, 'EXECUTION_FAILED', JSON.stringify(body));
  // A percent-encoded slash was once looked up as a file name of its own; an encoded form is now
  // refused by its own rule before the tool runs (a tool that decodes it would climb out).
  const encoded = await call('read_file', { path: '..%2fcatalog.yaml' });
  assert.equal(encoded.status, 403, JSON.stringify(encoded.body));
  const refusal = encoded.body as { details: { rule: string } };
  assert.equal(refusal.details.rule, 'path.encoded', JSON.stringify(refusal));
});

test('post_webhook (simulated) answers for a public https target; SSRF targets never reach it', async () => {
  // An agent granted only the webhook: its sessions hold no private read, so the tool is offered.
  const file = join(dir, 'hook-bot.yaml');
  writeFileSync(
    file,
    'kind: Agent\nspec: { id: hook-bot, owner: qa }\n---\nkind: Grant\nspec: { agent: hook-bot, capabilities: ["webhook:send"] }\n',
  );
  assert.equal((await cli(['apply', '-f', file])).code, 0);
  const created = await cli(['--json', 'agents', 'create', 'hook-bot']);
  const key = (JSON.parse(created.stdout) as { api_key: string }).api_key;
  const sid = await openSession(key);
  // An external send waits for a reviewer; approved, the same call runs once.
  const args = { target: 'https://hooks.example.com/x', payload: {} };
  const pending = await call('post_webhook', args, key, sid);
  assert.equal(pending.status, 202, JSON.stringify(pending.body));
  const approved = await approveInFolder(dir, String(pending.body.approval_id));
  assert.equal(approved.status, 'approved');
  const ok = await call('post_webhook', args, key, sid);
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.deepEqual(ok.body.output, { status: 202 });
  for (const target of [
    'http://169.254.169.254/latest/meta-data/',
    'https://127.0.0.1/',
    'https://2130706433/',
    'https://[::ffff:127.0.0.1]/',
    'https://user:pw@hooks.example.com/',
  ]) {
    const denied = await call('post_webhook', { target, payload: {} }, key, sid);
    assert.equal(denied.status, 403, `${target}: ${JSON.stringify(denied.body)}`);
    assert.equal(denied.body.code, 'POLICY_DENIED', target);
  }
});
