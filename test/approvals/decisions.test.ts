/**
 * Who decides (C8, C4): the authenticated operator, through the admin API (what the REST hook and
 * the console hand it after authenticating a credential). Only an account holding `approver`
 * decides: not the bootstrap token, not an admin, auditor or owner without the role. Four eyes are
 * two distinct accounts, neither the requester. Step-up is a fresh TOTP of the deciding operator.
 * Each refusal is a structured error and changes nothing; each benign neighbour goes through, and
 * what is recorded (approval row, events, audit log) is `operator:<id>`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { BOOTSTRAP_OPERATOR, operatorActor } from '../../src/domain/operators/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { confirmDeciders, enrol, operator } from '../support/operators.js';
import { approvePendingReviews } from '../support/reviews.js';
import { validTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';

const alice = operator('alice');
const bob = operator('bob');
/** An admin who is also an approver: may decide, as an approver. */
const carol = operator('carol', ['admin', 'approver']);
/** An approver with no second factor enrolled. */
const dave = operator('dave');
const notApprovers = [
  BOOTSTRAP_OPERATOR,
  operator('root', ['admin']),
  operator('aud', ['auditor']),
  operator('own', ['owner']),
];
const setup = { id: 'setup', via: 'library' } as const;

for (const backend of backends()) {
  describe(`who decides approvals and changes (${backend.name})`, () => {
    let nowMs = Date.UTC(2026, 6, 1, 9, 0, 0);
    const clock = () => new Date(nowMs);
    /** Into a fresh TOTP step, past any backoff. */
    const later = () => {
      nowMs += 60_000;
    };
    let tg: Gateway;
    let world: World;
    let inspector: Store;
    const codes = new Map<string, (at: Date) => string>();
    const code = (id: string) => (codes.get(id) ?? (() => '000000'))(clock());

    before(async () => {
      world = await openWorld({
        backend,
        options: {
          clock,
          masterKey: MasterKey.generate(),
          executor: demoExecutor().register('test.echo', () => ({ status: 'ok' })),
        },
      });
      tg = world.tg;
      inspector = await openStore(world.db);
      // The world's admins first (carol, an admin, is then set up by them, not by the bootstrap
      // token); the approvers are confirmed once their second factors are enrolled.
      await confirmDeciders(tg.admin, [], clock());
      for (const op of [alice, bob, carol]) codes.set(op.id, (await enrol(tg.admin, op)).code);
      await confirmDeciders(tg.admin, [alice.id, bob.id, carol.id], clock());
      const inline = { kind: 'inline', handler: 'test.echo' };
      await tg.config.apply(
        [
          { kind: 'Agent', spec: { id: 'bot', owner: 'qa', tier: 'privileged' } },
          {
            kind: 'Tool',
            spec: validTool({
              id: 'note',
              name: 'note',
              action_class: 'reversible_write',
              runtime: inline,
              required_capabilities: ['notes:write'],
              approval: { mode: 'always' },
            }),
          },
          {
            kind: 'Tool',
            spec: validTool({
              id: 'wire',
              name: 'wire',
              action_class: 'reversible_write',
              runtime: inline,
              required_capabilities: ['notes:write'],
              approval: { mode: 'always', second_factor: true },
            }),
          },
          { kind: 'Grant', spec: { agent: 'bot', capabilities: ['notes:write'] } },
        ],
        setup,
      );
    });
    after(async () => {
      await inspector.close();
      await world.close();
    });

    const pending = async (tool: string, args: unknown) => {
      const s = await tg.sessions.open('bot');
      const ctx = { agentId: 'bot', sessionId: s.id };
      const r = await tg.gate.invoke(ctx, tool, args);
      assert.equal(r.kind, 'pending_approval', JSON.stringify(r));
      if (r.kind !== 'pending_approval') throw new Error('not pending');
      return { ctx, id: r.approvalId };
    };
    const eventsOf = (subject: string) =>
      inspector.db.selectFrom('events').selectAll().where('subject', '=', subject).execute();

    test('only an approver account decides a call; the bootstrap token, admin, auditor, owner are refused', async () => {
      const { ctx, id } = await pending('note', { invoice: 'N-1' });
      for (const op of notApprovers) {
        await assert.rejects(tg.admin.approvals.approve(id, op), (err: Error) => {
          const e = err as Error & { code: string; details: unknown };
          assert.equal(e.code, 'FORBIDDEN', `${op.id}: ${e.message}`);
          assert.deepEqual(e.details, {});
          return true;
        });
        await assert.rejects(tg.admin.approvals.reject(id, op, 'no'), { code: 'FORBIDDEN' });
      }
      assert.equal((await tg.admin.approvals.get(id)).status, 'pending', 'nothing changed');
      assert.deepEqual(await eventsOf(`approval:${id}`), []);

      // The benign neighbour: an admin who also holds approver, recorded as their account.
      const approved = await tg.admin.approvals.approve(id, carol, {
        reason: 'ok',
        via: 'console',
      });
      assert.equal(approved.decided_by, 'operator:carol');
      const [event] = await eventsOf(`approval:${id}`);
      assert.equal(event?.actor, 'operator:carol');
      assert.equal(event?.via, 'console');
      const audit = await inspector.db
        .selectFrom('audit_log')
        .selectAll()
        .where('kind', '=', 'event.approval.approved')
        .execute();
      assert.ok(
        audit.some((r) => JSON.stringify(r).includes('operator:carol')),
        'the audit record names the operator',
      );
      const run = await tg.gate.invoke(ctx, 'note', { invoice: 'N-1' });
      assert.equal(run.kind, 'allow');
    });

    test('a rejection is an approver decision too, recorded as the account', async () => {
      const { id } = await pending('note', { invoice: 'N-2' });
      const rejected = await tg.admin.approvals.reject(id, alice, 'not today', 'cli');
      assert.equal(rejected.status, 'rejected');
      assert.equal(rejected.decided_by, operatorActor(alice, 'cli').id);
    });

    test("step-up: a tool that needs a second factor takes the deciding operator's own fresh code", async () => {
      const { id } = await pending('wire', { invoice: 'W-1' });
      later();
      await assert.rejects(tg.admin.approvals.approve(id, alice), { code: 'INPUT_INVALID' });
      later();
      await assert.rejects(tg.admin.approvals.approve(id, alice, { totp: code('bob') }), {
        code: 'INPUT_INVALID',
      });
      await assert.rejects(tg.admin.approvals.approve(id, dave, { totp: '123456' }), {
        code: 'FORBIDDEN',
        message: /no second factor enrolled/,
      });
      assert.equal((await tg.admin.approvals.get(id)).status, 'pending');
      later();
      const ok = await tg.admin.approvals.approve(id, alice, { totp: code('alice') });
      assert.equal(ok.decided_by, 'operator:alice');
    });

    test('four eyes: two distinct approver accounts, neither the requester; the same one twice is refused', async () => {
      // alice applies the irreversible tool and its grant: she is their requester.
      const requester = operatorActor(alice, 'library');
      await tg.config.apply(
        [
          {
            kind: 'Tool',
            spec: validTool({
              id: 'purge',
              name: 'purge',
              action_class: 'irreversible',
              access_tier: 'privileged',
              runtime: { kind: 'inline', handler: 'test.echo' },
              required_capabilities: ['data:purge'],
            }),
          },
          { kind: 'Grant', spec: { agent: 'bot', capabilities: ['data:purge'] } },
        ],
        requester,
      );
      // The privileged tool's change request opens once its security review is recorded.
      await approvePendingReviews(tg.admin);
      const changes = (await tg.admin.changes.list('pending')).filter((c) =>
        /purge/.test(c.subject),
      );
      assert.equal(changes.length, 2, JSON.stringify(changes));
      for (const change of changes) {
        assert.equal(change.requested_by, 'operator:alice');
        assert.equal(change.required, 2);
        later();
        await assert.rejects(tg.admin.changes.approve(change.id, alice, code('alice')), {
          code: 'FORBIDDEN',
          message: /requested change/,
        });
        for (const op of notApprovers) {
          await assert.rejects(tg.admin.changes.approve(change.id, op, '123456'), {
            code: 'FORBIDDEN',
          });
          await assert.rejects(tg.admin.changes.reject(change.id, op, 'no'), {
            code: 'FORBIDDEN',
          });
        }
        await assert.rejects(tg.admin.changes.approve(change.id, bob, undefined), {
          code: 'INPUT_INVALID',
        });
        later();
        assert.equal(
          (await tg.admin.changes.approve(change.id, bob, code('bob'))).status,
          'pending',
        );
        later();
        await assert.rejects(tg.admin.changes.approve(change.id, bob, code('bob')), {
          code: 'FORBIDDEN',
          message: /already approved/,
        });
        assert.equal((await tg.admin.changes.get(change.id)).status, 'pending');
        later();
        const applied = await tg.admin.changes.approve(change.id, carol, code('carol'));
        assert.equal(applied.status, 'applied');
        assert.deepEqual(applied.approvers, ['operator:bob', 'operator:carol']);
      }
      // The refused attempts spent no code: alice's failures are untouched.
      assert.equal((await tg.admin.secondFactor.state('alice')).failures, 0);

      // The irreversible tool, now active, runs only with the deciding operator's fresh code.
      const { id } = await pending('purge', { invoice: 'P-1' });
      await assert.rejects(tg.admin.approvals.approve(id, bob), { code: 'INPUT_INVALID' });
      later();
      const ok = await tg.admin.approvals.approve(id, bob, { totp: code('bob') });
      assert.equal(ok.decided_by, 'operator:bob');
    });
  });
}
