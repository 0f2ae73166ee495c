/**
 * Scoped approvals from the CLI (the built CLI, real child processes, the folder's SQLite
 * database shared with a gateway in this process): an approver with their own token and TOTP
 * approves a waiting external send with `--scope-calls` and `--scope-until`; `approvals show`
 * prints the scope in words; a later send to the same recipient in the run runs, another
 * recipient waits; `approvals revoke-scope` ends it and the next send waits again. Refused: a
 * scope out of range, no calls or past 24 hours (usage, exit 2, nothing decided). The refusals of
 * a scope by the call's class are in test/approvals/scoped-approvals.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { loadMasterKey } from '../../src/domain/credentials/index.js';
import { totpAt } from '../../src/domain/decisions/index.js';
import { approvalSigner } from '../../src/edge/cli/runtime-files.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { GateDecision } from '../../src/gate/index.js';
import { openToolgate, type Toolgate } from '../../src/host/toolgate.js';
import { ensureBuilt, runCli } from '../support/cli.js';
import { approvePendingReviews } from '../support/reviews.js';
import { inlineTool } from '../support/tools.js';

const setup = { id: 'setup', via: 'library' } as const;
const destinations = [
  { argument: '/to', kind: 'email', allow: { email_domains: ['customer.example'] } },
];
const input = {
  type: 'object',
  additionalProperties: false,
  required: ['to', 'note'],
  properties: { to: { type: 'string', maxLength: 200 }, note: { type: 'string', maxLength: 200 } },
};
let dir: string;
let tg: Toolgate;
let secret = '';
let asSam: NodeJS.ProcessEnv = {};
let lastStep = 0;

/**
 * Sam's next unused TOTP code on the real clock: each a later step than the last (no replay), at
 * most one step ahead of now (the verifier takes one step either side).
 */
async function code(): Promise<string> {
  for (;;) {
    const step = Math.max(lastStep + 1, Math.floor(Date.now() / 30_000));
    if (step <= Math.floor(Date.now() / 30_000) + 1) {
      lastStep = step;
      return totpAt(secret, new Date(step * 30_000));
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A code that is never checked: the refusals below come before the second factor is spent. */
const UNCHECKED = '000000';

const cli = (args: readonly string[]) => runCli(dir, ['--json', ...args], asSam);

before(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-scope-cli-'));
  const dataDir = join(dir, 'data');
  tg = await openToolgate({
    db: `sqlite:${join(dir, 'tg.db')}`,
    approvalSigner: () => approvalSigner(dataDir),
    masterKey: () => loadMasterKey({ dataDir }),
    audit: { checkpoints: false },
    detectors: false,
    health: false,
    executor: demoExecutor().register('t.ok', () => ({ status: 'sent' })),
  });
  const tool = (id: string, action_class: string) => ({
    kind: 'Tool',
    spec: inlineTool(id, {
      description: `The ${id.replace('_', ' ')} tool of the CLI scope test.`,
      action_class,
      required_capabilities: ['mail:send'],
      destinations,
      input_schema: input,
      runtime: { kind: 'inline', handler: 't.ok' },
    }),
  });
  await tg.admin.config.apply(
    [
      { kind: 'Agent', spec: { id: 'mailer', owner: 'qa' } },
      tool('mail_out', 'external_send'),
      { kind: 'Grant', spec: { agent: 'mailer', capabilities: ['mail:send'] } },
    ],
    setup,
  );
  await approvePendingReviews(tg.admin);
  const created = await runCli(dir, [
    '--json',
    'operators',
    'create',
    'sam',
    '--roles',
    'approver',
  ]);
  assert.equal(created.code, 0, created.stdout + created.stderr);
  const enrolled = await runCli(dir, ['--json', 'approvers', 'enroll', 'sam']);
  assert.equal(enrolled.code, 0, enrolled.stdout + enrolled.stderr);
  secret =
    new URL(String(JSON.parse(enrolled.stdout).otpauth_uri)).searchParams.get('secret') ?? '';
  const issued = await runCli(dir, [
    '--json',
    ...['operators', 'token', 'issue', '--for', 'sam', '--name', 'scope', '--days', '1'],
  ]);
  assert.equal(issued.code, 0, issued.stdout + issued.stderr);
  asSam = { TOOLGATE_TOKEN: String(JSON.parse(issued.stdout).token) };
});

after(async () => {
  await tg?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('approve with a scope, show it, use it, revoke it: the CLI end to end; bad scopes are refused', async () => {
  const session = await tg.agent.sessions.open(
    { kind: 'agent', agentId: 'mailer', credential: 'cred-cli' },
    { runId: 'run-cli' },
  );
  const ctx = {
    principal: { kind: 'agent' as const, agentId: 'mailer', credential: 'cred-cli' },
    sessionId: session.id,
  };
  let n = 0;
  const send = (tool: string, to: string): Promise<GateDecision> =>
    tg.agent.invoke(ctx, tool, { to, note: `note ${++n}` });
  const first = await send('mail_out', 'ann@customer.example');
  assert.equal(first.kind, 'pending_approval', JSON.stringify(first));
  const id = (first as { approvalId: string }).approvalId;

  // Out of range: a usage error, nothing decided.
  const zero = await cli(['approvals', 'approve', id, '--totp', UNCHECKED, '--scope-calls', '0']);
  assert.equal(zero.code, 2, zero.stdout + zero.stderr);
  assert.equal((await tg.admin.approvals.get(id)).status, 'pending');

  const approved = await cli([
    ...['approvals', 'approve', id, '--totp', await code()],
    ...['--scope-calls', '3', '--scope-until', '15m'],
  ]);
  assert.equal(approved.code, 0, approved.stdout + approved.stderr);
  const view = JSON.parse(approved.stdout) as { status: string; scope: { calls: number } | null };
  assert.equal(view.status, 'approved');
  assert.equal(view.scope?.calls, 3);
  const shown = await runCli(dir, ['approvals', 'show', id], asSam);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /scope/i);
  assert.match(shown.stdout, /3 calls/);

  // The approved call itself (the scope's first use), then another note to the same recipient.
  const exact = await tg.agent.invoke(ctx, 'mail_out', {
    to: 'ann@customer.example',
    note: 'note 1',
  });
  assert.equal(exact.kind, 'allow', JSON.stringify(exact));
  assert.equal(
    (await send('mail_out', 'ann@customer.example')).kind,
    'allow',
    'covered: use 2 of 3',
  );
  assert.equal((await send('mail_out', 'bob@customer.example')).kind, 'pending_approval');

  const revoked = await cli(['approvals', 'revoke-scope', id, '--reason', 'done for today']);
  assert.equal(revoked.code, 0, revoked.stdout + revoked.stderr);
  assert.equal((await send('mail_out', 'ann@customer.example')).kind, 'pending_approval');

  // A scope past its 24 hours is refused the same way, and nothing more is decided.
  const next = await send('mail_out', 'cy@customer.example');
  const nextId = (next as { approvalId: string }).approvalId;
  const far = await cli([
    ...['approvals', 'approve', nextId, '--totp', UNCHECKED],
    ...['--scope-calls', '3', '--scope-until', '48h'],
  ]);
  assert.equal(far.code, 2, far.stdout + far.stderr);
  assert.equal((await tg.admin.approvals.get(nextId)).status, 'pending');
});
