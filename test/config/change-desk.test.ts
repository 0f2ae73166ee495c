/**
 * Four eyes (C4): irreversible tools and the grants that unlock them wait for two
 * distinct approvers, privileged ones for one; each approver is an operator account proving
 * themselves with their own TOTP.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { totpAt } from '../../src/domain/decisions/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { backends } from '../support/backends.js';
import { confirmDeciders, enrol, operator } from '../support/operators.js';
import { approvePendingReviews } from '../support/reviews.js';
import { validTool, wipeDiskTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';

const admin: Actor = { id: 'cli:admin', via: 'cli' };
const aliceOp = operator('alice');
const bobOp = operator('bob');
/** An approver account with no second factor enrolled. */
const malloryOp = operator('mallory');
let alice = '';
let bob = '';

for (const backend of backends()) {
  describe(`four-eyes changes on ${backend.name}`, () => {
    let tg: Gateway;
    let world: World;
    let now = new Date('2026-03-01T12:00:00Z');
    const tick = () => {
      now = new Date(now.getTime() + 30_000);
      return now;
    };

    before(async () => {
      world = await openWorld({
        backend,
        options: { clock: () => now, masterKey: MasterKey.generate() },
      });
      tg = world.tg;
      alice = (await enrol(tg.admin, aliceOp)).secret;
      bob = (await enrol(tg.admin, bobOp)).secret;
      await confirmDeciders(tg.admin, [aliceOp.id, bobOp.id], now);
      await tg.config.apply(
        [
          { kind: 'Agent', spec: { id: 'ops', owner: 'qa', tier: 'privileged' } },
          { kind: 'Tool', spec: wipeDiskTool() },
          {
            kind: 'Tool',
            spec: validTool({
              id: 'read_audit',
              name: 'read_audit',
              access_tier: 'privileged',
              required_capabilities: ['audit:read'],
            }),
          },
          {
            kind: 'Grant',
            spec: { agent: 'ops', capabilities: ['disk:wipe', 'audit:read', 'plain:read'] },
          },
        ],
        admin,
      );
      await approvePendingReviews(tg);
    });
    after(async () => {
      await world.close();
    });

    test('a gated tool is registered as a draft that an admin cannot simply activate', async () => {
      assert.equal((await tg.catalog.get('wipe_disk', '1.0.0')).lifecycle, 'draft');
      await assert.rejects(tg.catalog.activate('wipe_disk', '1.0.0', admin), { code: 'FORBIDDEN' });
    });

    test('gated grants wait; the ungated one takes effect at once', async () => {
      assert.deepEqual((await tg.agents.get('ops')).capabilities, ['plain:read']);
      const subjects = (await tg.changes.list('pending'))
        .map((c) => `${c.subject}/${c.required}`)
        .sort();
      assert.deepEqual(subjects, [
        'activate read_audit@1.0.0/1',
        'activate wipe_disk@1.0.0/2',
        'grant audit:read to ops/1',
        'grant disk:wipe to ops/2',
      ]);
    });

    test('two distinct approvers with valid codes are needed; the same one twice, a wrong or replayed code are refused', async () => {
      const change = (await tg.changes.list('pending')).find(
        (c) => c.subject === 'grant disk:wipe to ops',
      );
      assert.ok(change);
      await assert.rejects(tg.changes.approve(change.id, aliceOp, '000000'), {
        code: 'INPUT_INVALID',
      });
      await assert.rejects(tg.changes.approve(change.id, malloryOp, '123456'), {
        code: 'FORBIDDEN',
      });
      const code = totpAt(alice, tick());
      assert.equal((await tg.changes.approve(change.id, aliceOp, code)).status, 'pending');
      tick();
      await assert.rejects(tg.changes.approve(change.id, aliceOp, totpAt(alice, now)), {
        code: 'FORBIDDEN',
      });
      assert.deepEqual(
        (await tg.agents.get('ops')).capabilities,
        ['plain:read'],
        'one approver is not enough',
      );
      const applied = await tg.changes.approve(change.id, bobOp, totpAt(bob, now));
      assert.equal(applied.status, 'applied');
      assert.deepEqual(applied.approvers, ['operator:alice', 'operator:bob']);
      assert.ok((await tg.agents.get('ops')).capabilities.includes('disk:wipe'));
      const other = (await tg.changes.list('pending')).find(
        (c) => c.subject === 'activate wipe_disk@1.0.0',
      );
      assert.ok(other);
      await assert.rejects(
        tg.changes.approve(other.id, aliceOp, code),
        { code: 'INPUT_INVALID' },
        'a used code is spent',
      );
    });

    test('an approved tool change activates the tool; a privileged one needs a single approver', async () => {
      const pending = await tg.changes.list('pending');
      const wipe = pending.find((c) => c.subject === 'activate wipe_disk@1.0.0');
      const audit = pending.find((c) => c.subject === 'activate read_audit@1.0.0');
      assert.ok(wipe && audit);
      tick();
      await tg.changes.approve(wipe.id, aliceOp, totpAt(alice, now));
      await tg.changes.approve(wipe.id, bobOp, totpAt(bob, now));
      assert.equal((await tg.catalog.get('wipe_disk', '1.0.0')).lifecycle, 'active');
      tick();
      assert.equal(
        (await tg.changes.approve(audit.id, aliceOp, totpAt(alice, now))).status,
        'applied',
      );
      assert.equal((await tg.catalog.get('read_audit', '1.0.0')).lifecycle, 'active');
    });

    test('a rejected change never applies and cannot be approved later', async () => {
      const grant = (await tg.changes.list('pending')).find(
        (c) => c.subject === 'grant audit:read to ops',
      );
      assert.ok(grant);
      await tg.changes.reject(grant.id, bobOp, 'not needed');
      tick();
      await assert.rejects(tg.changes.approve(grant.id, aliceOp, totpAt(alice, now)), {
        code: 'APPROVAL_STATE',
      });
      assert.ok(!(await tg.agents.get('ops')).capabilities.includes('audit:read'));
    });
  });
}
