/**
 * `toolgate destination-sets`: an admin creates a set, adds and removes members (normalised,
 * recorded as that operator), a bad value refuses the whole change and changes nothing, an auditor
 * lists and shows but cannot change, and a gateway sees each change at its next call. The built
 * CLI in real child processes on a real SQLite file.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { ensureBuilt, runCli } from '../support/cli.js';
import { validTool } from '../support/tools.js';
import { addAgentsAndTools, openWorld, type World } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
let dir: string;
let world: World;
let tg: Gateway;
let tokens: Record<string, string> = {};

before(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-dest-cli-'));
  world = await openWorld({
    options: {
      db: `sqlite:${join(dir, 'tg.db')}`,
      executor: demoExecutor().register('t.ok', () => ({ status: 'ok' })),
    },
    operators: [
      { id: 'root', roles: ['admin'], token: true },
      { id: 'audrey', roles: ['auditor'], token: true },
    ],
  });
  ({ tg, tokens } = world);
});

after(async () => {
  await world.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

test('an admin manages a set from the CLI; the gate follows each change; an auditor only reads', async () => {
  const root = { TOOLGATE_TOKEN: tokens.root ?? '' };
  const created = await runCli(
    dir,
    ['--json', 'destination-sets', 'create', 'payees', '--kind', 'account'],
    root,
  );
  assert.equal(created.code, 0, created.stderr + created.stdout);
  assert.equal(JSON.parse(created.stdout).set.source, 'admin');

  await addAgentsAndTools(
    tg,
    {
      tools: [
        validTool({
          id: 'add_payee',
          name: 'add_payee',
          description: 'Add a payee account to the payment run.',
          action_class: 'reversible_write',
          data_access: 'none',
          required_capabilities: ['pay:use'],
          runtime: { kind: 'inline', handler: 't.ok' },
          output_schema: { type: 'object' },
          destinations: [{ argument: '/iban', kind: 'account', allow: { sets: ['payees'] } }],
          input_schema: {
            type: 'object',
            additionalProperties: false,
            required: ['iban'],
            properties: { iban: { type: 'string', maxLength: 64 } },
          },
        }),
      ],
      agents: [{ id: 'payer', capabilities: ['pay:use'], key: false }],
    },
    admin,
  );
  const s = await tg.sessions.open('payer');
  const pay = (iban: string) =>
    tg.gate.invoke({ agentId: 'payer', sessionId: s.id }, 'add_payee', { iban });

  assert.equal((await pay('GB82WEST12345698765432')).kind, 'deny', 'an empty set admits nothing');
  const added = await runCli(
    dir,
    ['--json', 'destination-sets', 'add', 'payees', 'gb82 west 1234 5698 7654 32'],
    root,
  );
  assert.equal(added.code, 0, added.stderr);
  assert.deepEqual(JSON.parse(added.stdout).added, ['GB82WEST12345698765432']);
  assert.equal((await pay('GB82 WEST 1234 5698 7654 32')).kind, 'allow');
  const other = await pay('DE89370400440532013000');
  assert.equal(other.kind, 'deny');
  if (other.kind === 'deny') assert.equal(other.code, 'DESTINATION_NOT_ALLOWED');

  const bad = await runCli(
    dir,
    ['--json', 'destination-sets', 'add', 'payees', 'DE89', 'x!'],
    root,
  );
  assert.equal(bad.code, 2);
  assert.equal(JSON.parse(bad.stdout).error.code, 'INPUT_INVALID');

  const audrey = { TOOLGATE_TOKEN: tokens.audrey ?? '' };
  const shown = await runCli(dir, ['--json', 'destination-sets', 'show', 'payees'], audrey);
  assert.equal(shown.code, 0, shown.stderr);
  assert.deepEqual(JSON.parse(shown.stdout).members, ['GB82WEST12345698765432']);
  const listed = await runCli(dir, ['destination-sets', 'list'], audrey);
  assert.match(listed.stdout, /payees\s+account\s+admin\s+1/);
  const refused = await runCli(
    dir,
    ['destination-sets', 'remove', 'payees', 'GB82WEST12345698765432'],
    audrey,
  );
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr + refused.stdout, /FORBIDDEN/);

  const removed = await runCli(
    dir,
    ['--json', 'destination-sets', 'remove', 'payees', 'GB82WEST12345698765432'],
    root,
  );
  assert.deepEqual(JSON.parse(removed.stdout).removed, ['GB82WEST12345698765432']);
  assert.equal((await pay('GB82WEST12345698765432')).kind, 'deny');

  const events = await tg.events.list({ subject: 'destination_set:payees', limit: 10 });
  assert.deepEqual(
    events.map((e) => [e.action, e.actor]),
    [
      ['destination_set.created', 'operator:root'],
      ['destination_set.members_added', 'operator:root'],
      ['destination_set.members_removed', 'operator:root'],
    ],
  );
});
