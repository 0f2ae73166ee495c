/**
 * @module `toolgate channels add|list|remove` as an operator runs it (the built CLI in a child
 * process on a real database): the URL never printed, the change audited as the CLI's operator,
 * a bad URL refused with exit code 2 (usage) and nothing stored; and a deprecation made by the CLI (another
 * process) reaches the owner's channel when the gateway next checks the event record.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { loadMasterKey } from '../../src/domain/credentials/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import type { OwnerNoticePayload } from '../../src/operations/owners/index.js';
import { ensureBuilt, runCli } from '../support/cli.js';
import { validTool } from '../support/tools.js';
import { LOOPBACK_OUTBOUND, type Receiver, webhookReceiver } from '../support/webhook-receiver.js';

/** The admin's setting this test's loopback receiver needs, for every CLI run. */
const LOOPBACK_ENV = { TOOLGATE_OUTBOUND_ALLOW_LOOPBACK: '1' };

let dir = '';
let hook: Receiver;
let tg: Gateway;

before(async () => {
  ensureBuilt();
  hook = await webhookReceiver();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-channels-cli-'));
  tg = await openGateway({
    db: `sqlite:${join(dir, 'tg.db')}`,
    // The CLI seals channel URLs with its data folder's master key: the gateway opens them with it.
    masterKey: () => loadMasterKey({ dataDir: join(dir, 'data') }),
    detectors: false,
    teams: ['billing-team'],
    outbound: LOOPBACK_OUTBOUND,
  });
  await tg.config.apply([{ kind: 'Tool', spec: validTool() }], { id: 'setup', via: 'library' });
});
after(async () => {
  await tg.close();
  await hook.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

test('channels are added, listed without their URL, and removed; each change audited', async () => {
  const url = `${hook.url}/T9/B9/cli-secret-part`;
  const added = await runCli(
    dir,
    ['--json', 'channels', 'add', '--team', 'billing-team', '--url', url],
    LOOPBACK_ENV,
  );
  assert.equal(added.code, 0, added.stderr);
  assert.ok(!added.stdout.includes('cli-secret-part'));
  const channel = JSON.parse(added.stdout) as { id: string; team: string; url_hint: string };
  assert.equal(channel.team, 'billing-team');
  const listed = await runCli(dir, ['--json', 'channels', 'list'], LOOPBACK_ENV);
  assert.equal(listed.code, 0, listed.stderr);
  assert.ok(!listed.stdout.includes('cli-secret-part'));
  assert.deepEqual(
    (JSON.parse(listed.stdout) as { channels: { id: string }[] }).channels.map((c) => c.id),
    [channel.id],
  );
  const bad = await runCli(
    dir,
    ['--json', 'channels', 'add', '--team', 'billing-team', '--url', 'http://hooks.example.com/x'],
    LOOPBACK_ENV,
  );
  assert.equal(bad.code, 2);
  assert.equal((JSON.parse(bad.stdout) as { error: { code: string } }).error.code, 'INPUT_INVALID');
  assert.equal((await tg.ownerChannels.list()).length, 1);
  const events = (await tg.events.list({ limit: 100 })).filter((e) =>
    e.action.startsWith('owner_channel.'),
  );
  assert.deepEqual(
    events.map((e) => [e.action, e.via]),
    [['owner_channel.added', 'cli']],
  );

  // A deprecation made by the CLI is seen by the gateway's next check and reaches the channel.
  const dep = await runCli(
    dir,
    ['tools', 'deprecate', 'lookup_invoice@1.0.0', '--window', '3'],
    LOOPBACK_ENV,
  );
  assert.equal(dep.code, 0, dep.stderr);
  await tg.ownerNotices.check();
  await tg.ownerNotices.settled();
  await hook.received(1);
  const types = hook
    .json<OwnerNoticePayload>()
    .map((m) => m.toolgate.type)
    .sort();
  assert.deepEqual(types, ['owner.deprecated', 'owner.retiring']);

  const removed = await runCli(dir, ['channels', 'remove', channel.id], LOOPBACK_ENV);
  assert.equal(removed.code, 0, removed.stderr);
  assert.deepEqual(await tg.ownerChannels.list(), []);
  const missing = await runCli(dir, ['--json', 'channels', 'remove', channel.id], LOOPBACK_ENV);
  assert.equal(missing.code, 4);
  assert.equal((JSON.parse(missing.stdout) as { error: { code: string } }).error.code, 'NOT_FOUND');
});
