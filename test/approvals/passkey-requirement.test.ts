/**
 * `passkeys.require_for_irreversible` is the organisation's rule, not one process's
 * (docs/architecture.md §6): a start with the setting records it in the database, so a CLI
 * command or a replica opened on the same database without the setting refuses a TOTP code for a
 * four-eyes change too; only a start with an explicit `false` lifts it, and then the same TOTP
 * approval is accepted (the benign neighbour).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isToolgateError } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { totpAt } from '../../src/domain/decisions/index.js';
import { type Gateway, openGateway } from '../../src/host/toolgate.js';
import { confirmDeciders, enrol, operator } from '../support/operators.js';
import { openWorld, type World } from '../support/world.js';

const alice = operator('alice', ['approver']);
let now = new Date('2026-06-01T10:00:00Z');
const clock = () => now;
let world: World;
let secret: string;
const opened: Gateway[] = [];
const masterKey = MasterKey.generate();

/** Another process on the same database: no passkeys setting of its own unless given. */
async function another(required?: boolean): Promise<Gateway> {
  const tg = await openGateway({
    db: world.db,
    clock,
    masterKey,
    ...(required === undefined ? {} : { passkeys: { required } }),
  });
  opened.push(tg);
  return tg;
}

before(async () => {
  world = await openWorld({
    demo: true,
    options: { clock, masterKey, passkeys: { required: true } },
  });
  secret = (await enrol(world.tg.admin, alice)).secret;
  await confirmDeciders(world.tg.admin, [alice.id], now);
});

after(async () => {
  for (const tg of opened) await tg.close();
  await world?.close();
});

test('a process without the setting holds the rule a start recorded; an explicit false lifts it', async () => {
  const pending = await world.tg.changes.list('pending');
  const change = pending.find((c) => c.kind === 'grant' && c.required === 2);
  assert.ok(change, 'the demo asks two approvers for a privileged grant');

  const cli = await another();
  now = new Date(now.getTime() + 60_000);
  await assert.rejects(
    cli.admin.changes.approve(change.id, alice, totpAt(secret, now), 'cli'),
    (err) => isToolgateError(err) && err.code === 'PASSKEY_REQUIRED',
  );
  assert.deepEqual((await cli.changes.get(change.id)).approvers, [], 'nothing recorded');

  // A start with an explicit false lifts the rule for everyone; the same approval then counts.
  await another(false);
  now = new Date(now.getTime() + 60_000);
  const view = await cli.admin.changes.approve(change.id, alice, totpAt(secret, now), 'cli');
  assert.deepEqual(view.approvers, ['operator:alice']);
});

test('setting and lifting the rule are audited, each as the configuration that did it; a start that changes nothing records nothing', async () => {
  const changes = async () =>
    (await world.tg.admin.events.list({ subject: 'organisation:passkeys', limit: 100 })).map(
      (e) => ({
        actor: `${e.actor} via ${e.via}`,
        ...((typeof e.details === 'string' ? JSON.parse(e.details) : e.details) as object),
      }),
    );
  const before = await changes();
  // The world's start set it (was off), and the earlier test's explicit false lifted it.
  assert.deepEqual(before.slice(-2), [
    {
      actor: 'system:config via system',
      require_for_irreversible: true,
      was: false,
      setting: 'passkeys.require_for_irreversible',
    },
    {
      actor: 'system:config via system',
      require_for_irreversible: false,
      was: true,
      setting: 'passkeys.require_for_irreversible',
    },
  ]);
  // Starts that leave the rule as it is (unset, or false again) add no record.
  await another();
  await another(false);
  assert.equal((await changes()).length, before.length);
  // Set again: one record.
  await another(true);
  const after = await changes();
  assert.equal(after.length, before.length + 1);
  assert.deepEqual(after.at(-1), {
    actor: 'system:config via system',
    require_for_irreversible: true,
    was: false,
    setting: 'passkeys.require_for_irreversible',
  });
});
