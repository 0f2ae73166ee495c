/**
 * The CLI shows withdrawn approvals as such: `approvals list --status withdrawn` and
 * `approvals show` on a folder where a run with a waiting call was revoked.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { openGateway } from '../../src/host/toolgate.js';
import { ensureBuilt, runCli } from '../support/cli.js';
import { approvePendingReviews } from '../support/reviews.js';
import { noteTool } from '../support/tools.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
let dir: string;
let approvalId: string;

before(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-withdrawn-cli-'));
  const tg = await openGateway({ db: `sqlite:${join(dir, 'tg.db')}` });
  try {
    await tg.config.apply(
      [
        { kind: 'Agent', spec: { id: 'note-bot', owner: 'qa' } },
        {
          kind: 'Tool',
          spec: noteTool(),
        },
        { kind: 'Grant', spec: { agent: 'note-bot', capabilities: ['note:send'] } },
      ],
      admin,
    );
    await approvePendingReviews(tg.admin);
    const who = { kind: 'agent' as const, agentId: 'note-bot', credential: 'cred-cli' };
    const { handle } = await tg.agent.runs.mint(who, { via: 'test' });
    const decision = await tg.agent.invoke({ principal: who, sessionId: handle }, 'send_note', {});
    assert.equal(decision.kind, 'pending_approval');
    approvalId = (decision as { approvalId: string }).approvalId;
    await tg.agent.runs.revoke(handle, who);
  } finally {
    await tg.close();
  }
});

after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

test('approvals list --status withdrawn and approvals show name the withdrawn approval', async () => {
  const listed = await runCli(dir, ['--json', 'approvals', 'list', '--status', 'withdrawn']);
  assert.equal(listed.code, 0, listed.stderr);
  const page = JSON.parse(listed.stdout) as { approvals: { id: string; status: string }[] };
  assert.deepEqual(
    page.approvals.map((a) => [a.id, a.status]),
    [[approvalId, 'withdrawn']],
  );
  const pending = await runCli(dir, ['--json', 'approvals', 'list', '--status', 'pending']);
  assert.deepEqual((JSON.parse(pending.stdout) as { approvals: unknown[] }).approvals, []);
  const shown = await runCli(dir, ['approvals', 'show', approvalId]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /withdrawn/);
});
