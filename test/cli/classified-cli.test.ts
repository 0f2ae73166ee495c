/**
 * `toolgate audit classified` (docs/security-model.md, "Personal data and the audit log"), the
 * built CLI in real child processes on a real SQLite file and data folder: an auditor finds a
 * call by the e-mail address it carried and matches the keyed hash to the log's record (which
 * holds no address), and reads one call (recorded); an approver is refused; an auditor may not
 * erase; a blank or short value is refused; an admin's erasure by value removes only the rows
 * carrying it and `audit verify` still passes; the sweep removes rows past
 * TOOLGATE_CLASSIFIED_RETENTION_DAYS and keeps newer ones.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { loadMasterKey } from '../../src/domain/credentials/index.js';
import { auditSigner } from '../../src/edge/cli/runtime-files.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { DEFAULT_ORIGIN } from '../../src/records/audit/index.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { ensureBuilt, runCli } from '../support/cli.js';
import { validTool } from '../support/tools.js';
import { addOperators, openWorld, type World } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const EMAIL = 'Grace.Hopper@customer.example';
const DAY = 86_400_000;
let dir: string;
let world: World;
let tg: Gateway;
let inspector: Store;
let now = new Date(Date.now() - 40 * DAY);
const tokens: Record<string, string> = {};
const calls: Record<string, string> = {};

before(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-classified-cli-'));
  const dataDir = join(dir, 'data');
  world = await openWorld({
    actor: admin,
    options: {
      db: `sqlite:${join(dir, 'tg.db')}`,
      masterKey: () => loadMasterKey({ dataDir }),
      auditSigner: () => auditSigner(dataDir, DEFAULT_ORIGIN),
      clock: () => now,
      detectors: false,
      executor: demoExecutor().register('test.note', () => ({ status: 'noted' })),
    },
    tools: [
      validTool({
        id: 'note',
        name: 'note',
        required_capabilities: ['notes:write'],
        runtime: { kind: 'inline', handler: 'test.note' },
        input_schema: {
          type: 'object',
          additionalProperties: false,
          properties: { text: { type: 'string' } },
        },
      }),
    ],
    agents: [{ id: 'crm-bot', capabilities: ['notes:write'], key: false }],
  });
  tg = world.tg;
  const invoke = async (text: string) => {
    const s = await tg.sessions.open('crm-bot');
    const r = await tg.gate.invoke({ agentId: 'crm-bot', sessionId: s.id }, 'note', { text });
    assert.equal(r.kind, 'allow', JSON.stringify(r));
    return r.callId;
  };
  // Forty days ago: past a 30-day retention. Then two calls today.
  calls.old = await invoke('an old note');
  now = new Date();
  calls.email = await invoke(`call ${EMAIL} back`);
  calls.other = await invoke('a note without an address');
  await tg.gate.flush();
  // The gateway signs a checkpoint with the data folder's key, as a running `serve` does within
  // its interval, so `audit verify` below has the key it trusts, however fast the commands run.
  await tg.audit.checkpoint();
  inspector = await openStore(`sqlite:${join(dir, 'tg.db')}`);
  Object.assign(
    tokens,
    await addOperators(tg, [
      { id: 'root', roles: ['admin'], token: true },
      { id: 'audrey', roles: ['auditor'], token: true },
      { id: 'april', roles: ['approver'], token: true },
    ]),
  );
});

after(async () => {
  await inspector?.close();
  await world.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

const as = (who: string) => ({ TOOLGATE_TOKEN: tokens[who] ?? '' });

test('an auditor finds a call by the address it carried and matches the keyed hash in the log, which holds no address', async () => {
  const log = JSON.stringify(await inspector.db.selectFrom('audit_log').selectAll().execute());
  assert.ok(!log.toLowerCase().includes(EMAIL.toLowerCase()), 'the address is in the audit log');
  // ASCII letters folded: the address as a person would type it finds the call.
  const found = await runCli(
    dir,
    ['--json', 'audit', 'classified', 'search', '--value', EMAIL.toLowerCase()],
    as('audrey'),
  );
  assert.equal(found.code, 0, found.stderr);
  const result = JSON.parse(found.stdout) as {
    items: { call_id: string; args: { text: string }; masked: { text: string } }[];
  };
  assert.deepEqual(
    result.items.map((i) => i.call_id),
    [calls.email],
  );
  assert.equal(result.items[0]?.args.text, `call ${EMAIL} back`);
  const pre = await inspector.db
    .selectFrom('audit_log')
    .select('args_redacted')
    .where('call_id', '=', calls.email ?? '')
    .where('kind', '=', 'call.pre')
    .executeTakeFirstOrThrow();
  assert.deepEqual(JSON.parse(pre.args_redacted ?? 'null'), result.items[0]?.masked);
  const shown = await runCli(dir, ['audit', 'classified', 'show', calls.email ?? ''], as('audrey'));
  assert.equal(shown.code, 0, shown.stderr);
  assert.ok(shown.stdout.includes(EMAIL));
  const reads = await inspector.db
    .selectFrom('events')
    .select(['action', 'actor'])
    .where('action', 'like', 'audit.classified_%')
    .orderBy('seq')
    .execute();
  assert.deepEqual(
    reads.map((e) => [e.action, e.actor]),
    [
      ['audit.classified_searched', 'operator:audrey'],
      ['audit.classified_read', 'operator:audrey'],
    ],
  );
});

test('an approver may not read the classified store; an auditor may not erase', async () => {
  const refused = await runCli(
    dir,
    ['audit', 'classified', 'show', calls.email ?? ''],
    as('april'),
  );
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /FORBIDDEN/);
  assert.ok(!refused.stdout.includes(EMAIL) && !refused.stderr.includes(EMAIL));
  const erase = await runCli(dir, ['audit', 'classified', 'erase', '--value', EMAIL], as('audrey'));
  assert.notEqual(erase.code, 0);
  assert.match(erase.stderr, /FORBIDDEN/);
});

test('a blank or short value is refused (INPUT_INVALID) and changes nothing; four characters other than blanks work', async () => {
  const rowsBefore = (await inspector.db.selectFrom('call_arguments').select('call_id').execute())
    .length;
  for (const value of ['    ', ' \t  \t ', '  ab  ', 'a b c']) {
    for (const command of ['search', 'erase']) {
      const r = await runCli(dir, ['audit', 'classified', command, '--value', value], as('root'));
      assert.notEqual(r.code, 0, `${command} ${JSON.stringify(value)}: ${r.stdout}`);
      assert.match(r.stderr, /INPUT_INVALID/);
    }
  }
  const left = await inspector.db.selectFrom('call_arguments').select('call_id').execute();
  assert.equal(left.length, rowsBefore, 'nothing was erased');
  const padded = await runCli(
    dir,
    ['--json', 'audit', 'classified', 'search', '--value', ' back'],
    as('audrey'),
  );
  assert.equal(padded.code, 0, padded.stderr);
  assert.deepEqual(
    (JSON.parse(padded.stdout) as { items: { call_id: string }[] }).items.map((i) => i.call_id),
    [calls.email],
  );
});

test('an admin erases by value, only the rows carrying it, and audit verify still passes', async () => {
  const erased = await runCli(
    dir,
    ['--json', 'audit', 'classified', 'erase', '--value', EMAIL],
    as('root'),
  );
  assert.equal(erased.code, 0, erased.stderr);
  assert.deepEqual(JSON.parse(erased.stdout), { erased: 1 });
  const left = await inspector.db.selectFrom('call_arguments').select('call_id').execute();
  assert.deepEqual(left.map((r) => r.call_id).sort(), [calls.old, calls.other].sort());
  const verify = await runCli(dir, ['audit', 'verify'], as('audrey'));
  assert.equal(verify.code, 0, verify.stdout + verify.stderr);
  assert.match(verify.stdout, /^ok: /);
});

test('the sweep removes rows past the configured retention and keeps newer ones; verify still passes', async () => {
  const swept = await runCli(dir, ['--json', 'audit', 'classified', 'sweep'], {
    ...as('root'),
    TOOLGATE_CLASSIFIED_RETENTION_DAYS: '30',
  });
  assert.equal(swept.code, 0, swept.stderr);
  assert.deepEqual(JSON.parse(swept.stdout), { removed: 1, retention_days: 30 });
  const left = await inspector.db.selectFrom('call_arguments').select('call_id').execute();
  assert.deepEqual(
    left.map((r) => r.call_id),
    [calls.other],
  );
  const bad = await runCli(dir, ['audit', 'classified', 'sweep'], {
    ...as('root'),
    TOOLGATE_CLASSIFIED_RETENTION_DAYS: '0',
  });
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /INPUT_INVALID/);
  const verify = await runCli(dir, ['audit', 'verify'], as('audrey'));
  assert.equal(verify.code, 0, verify.stdout + verify.stderr);
});
