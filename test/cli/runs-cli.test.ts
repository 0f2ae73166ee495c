/**
 * `toolgate runs`: an auditor lists the open runs of an agent, only an admin revokes one (recorded
 * as that operator), an unknown handle is RUN_NOT_FOUND, and the holder's run is then refused with
 * RUN_REVOKED. The built CLI in real child processes on a real SQLite file.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { ensureBuilt, runCli } from '../support/cli.js';
import { openWorld, type World } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
let dir: string;
let world: World;
let tg: Gateway;
let who: { kind: 'agent'; agentId: string; credential: string };
let tokens: Record<string, string> = {};

before(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-runs-cli-'));
  world = await openWorld({
    actor: admin,
    options: { db: `sqlite:${join(dir, 'tg.db')}` },
    agents: [{ id: 'helper-bot' }],
    operators: [
      { id: 'root', roles: ['admin'], token: true },
      { id: 'audrey', roles: ['auditor'], token: true },
    ],
  });
  ({ tg, tokens } = world);
  const key = world.keys['helper-bot'] ?? '';
  who = {
    kind: 'agent',
    agentId: 'helper-bot',
    credential: (await tg.agent.authenticate(key))?.credential ?? '',
  };
});

after(async () => {
  await world.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

test('an auditor lists the open runs of an agent but cannot revoke one', async () => {
  const { handle } = await tg.agent.runs.mint(who, { via: 'test' });
  const env = { TOOLGATE_TOKEN: tokens.audrey ?? '' };
  const listed = await runCli(dir, ['--json', 'runs', 'list', '--agent', 'helper-bot'], env);
  assert.equal(listed.code, 0, listed.stderr);
  const runs = (JSON.parse(listed.stdout) as { runs: { id: string; agent_id: string }[] }).runs;
  assert.ok(runs.some((r) => r.id === handle));
  const none = await runCli(dir, ['--json', 'runs', 'list', '--agent', 'nobody-bot'], env);
  assert.deepEqual((JSON.parse(none.stdout) as { runs: unknown[] }).runs, []);
  const refused = await runCli(dir, ['runs', 'revoke', handle, '--reason', 'x'], env);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /FORBIDDEN/);
  const refusal = await tg.agent.runs.refusal(handle, who);
  assert.equal(refusal.code, 'RUN_NOT_FOUND', 'still open: refusal() finds nothing to say');
});

test('an admin revokes a run: recorded as the operator, the holder is refused with RUN_REVOKED', async () => {
  const { handle } = await tg.agent.runs.mint(who, { via: 'test' });
  const env = { TOOLGATE_TOKEN: tokens.root ?? '' };
  const unknown = await runCli(dir, ['runs', 'revoke', 'ses_nosuchrun', '--reason', 'x'], env);
  assert.notEqual(unknown.code, 0);
  assert.match(unknown.stderr, /RUN_NOT_FOUND/);
  const done = await runCli(
    dir,
    ['--json', 'runs', 'revoke', handle, '--reason', 'leaked handle'],
    env,
  );
  assert.equal(done.code, 0, done.stderr);
  assert.deepEqual(JSON.parse(done.stdout), { run: handle, revoked: true });
  const events = await tg.events.list({ subject: `session:${handle}`, limit: 100 });
  const revoked = events.filter((e) => e.action === 'run.revoked');
  assert.equal(revoked.length, 1);
  assert.equal(revoked[0]?.actor, 'operator:root');
  assert.equal((await tg.agent.runs.refusal(handle, who)).code, 'RUN_REVOKED');
  await assert.rejects(
    tg.agent.invoke({ principal: who, sessionId: handle }, 'anything', {}),
    (err: { code?: string }) => err.code === 'SESSION_NOT_FOUND',
  );
});
