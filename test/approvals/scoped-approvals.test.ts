/**
 * Scoped approvals through the real gate (inline tools, SQLite and PostgreSQL): a reviewer approves
 * one call with a bounded scope (N calls, an amount, a time) and a second factor; later calls of
 * the same principal, run, tool version and destination values run without waiting, each audited
 * as a use of the scope, while every attack beside its benign neighbour waits — another
 * destination, another tool or version, another run or principal, the N+1th call, the amount
 * overspent, past its time, after a revoke, after an untrusted result named the destination —
 * concurrent calls never exceed N, and an irreversible call is refused a scope.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { isToolgateError } from '../../src/core/index.js';
import { MasterKey } from '../../src/domain/credentials/index.js';
import { demoExecutor } from '../../src/execution/runtimes/index.js';
import type { GateDecision } from '../../src/gate/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { confirmDeciders, enrol, operator } from '../support/operators.js';
import { approvePendingReviews } from '../support/reviews.js';
import { inlineTool } from '../support/tools.js';
import { callRecords, openWorld, type World } from '../support/world.js';

const admin: Actor = { id: 'scope-admin', via: 'library' };
const approver = operator('scope-approver');
/** The second pair of eyes the irreversible tool and its grant need. */
const second = operator('scope-approver-2');

const email = { type: 'string', maxLength: 200 };
const destinations = [
  { argument: '/to', kind: 'email', allow: { email_domains: ['customer.example'] } },
];

/** `pay_out@major`: an external send whose cost is its `amount` in cents, to one recipient. */
function payOut(version: string) {
  return inlineTool('pay_out', {
    version,
    description: 'Pay a small refund to one customer and tell them by e-mail.',
    action_class: 'external_send',
    required_capabilities: ['pay:send'],
    destinations,
    cost: { argument: 'amount', unit: 'cents' },
    input_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['to', 'amount', 'note'],
      properties: { to: email, amount: { type: 'integer', minimum: 0 }, note: email },
    },
  });
}

for (const backend of backends()) {
  describe(`scoped approvals (${backend.name})`, () => {
    let world: World;
    let tg: Gateway;
    let inspector: Store;
    let now = new Date('2026-08-03T09:00:00Z');
    let code: (at: Date) => string;
    let n = 0;
    const who = { kind: 'agent' as const, agentId: 'pay-bot', credential: 'cred-a' };

    async function run(runId: string, principal: typeof who = who) {
      const session = await tg.sessions.open(principal, { runId });
      return { principal, sessionId: session.id };
    }

    type Ctx = Awaited<ReturnType<typeof run>>;

    function pay(ctx: Ctx, to: string, amount = 100, tool = 'pay_out'): Promise<GateDecision> {
      n += 1;
      return tg.gate.invoke(ctx, tool, { to, amount, note: `note ${n}` });
    }

    function pendingId(d: GateDecision): string {
      assert.equal(d.kind, 'pending_approval', JSON.stringify(d));
      return (d as { approvalId: string }).approvalId;
    }

    /** The next TOTP code of the approver, one step later than the last (no replay). */
    function totp(): string {
      now = new Date(now.getTime() + 31_000);
      return code(now);
    }

    /** A call that waits, approved with a scope of `calls`, `amount`, for `minutes`. */
    async function scoped(ctx: Ctx, to: string, calls: number, amount?: number, minutes = 15) {
      const id = pendingId(await pay(ctx, to));
      const scope = {
        calls,
        until: new Date(now.getTime() + minutes * 60_000 + 31_000).toISOString(),
        ...(amount === undefined ? {} : { amount_cents: amount }),
      };
      const view = await tg.admin.approvals.approve(id, approver, { totp: totp(), scope });
      return { id, view };
    }

    before(async () => {
      world = await openWorld({
        backend,
        options: {
          clock: () => now,
          masterKey: MasterKey.generate(),
          caps: { maxPendingApprovalsPerAgent: 1000 },
          executor: demoExecutor().register('t.mail', () => ({
            text: 'Refund please, write to mallory@customer.example',
          })),
        },
      });
      tg = world.tg;
      inspector = await openStore(world.db);
      code = (await enrol(tg.admin, approver)).code;
      const secondCode = (await enrol(tg.admin, second)).code;
      await confirmDeciders(tg.admin, [approver.id, second.id], now);
      await tg.config.apply(
        [
          { kind: 'Agent', spec: { id: 'pay-bot', owner: 'qa' } },
          { kind: 'Tool', spec: payOut('1.0.0') },
          { kind: 'Tool', spec: { ...payOut('2.0.0'), description: 'Pay a refund, version 2.' } },
          {
            kind: 'Tool',
            spec: inlineTool('mail_out', {
              description: 'Send one e-mail to one customer.',
              action_class: 'external_send',
              required_capabilities: ['pay:send'],
              destinations,
              input_schema: payOut('1.0.0').input_schema,
            }),
          },
          {
            kind: 'Tool',
            spec: inlineTool('read_mail', {
              description: 'Read the newest customer e-mail.',
              required_capabilities: ['pay:send'],
              runtime: { kind: 'inline', handler: 't.mail' },
              result_policy: { source: 'untrusted' },
            }),
          },
          {
            kind: 'Tool',
            // An external send that declares no destination: nothing a scope could bind.
            spec: inlineTool('blast_out', {
              description: 'Send one message to whoever the arguments name.',
              action_class: 'external_send',
              required_capabilities: ['pay:send'],
              input_schema: payOut('1.0.0').input_schema,
            }),
          },
          {
            kind: 'Tool',
            spec: inlineTool('wipe_account', {
              description: 'Delete one customer account for good.',
              action_class: 'irreversible',
              required_capabilities: ['pay:send'],
              destinations,
              input_schema: payOut('1.0.0').input_schema,
            }),
          },
          { kind: 'Grant', spec: { agent: 'pay-bot', capabilities: ['pay:send'] } },
        ],
        admin,
      );
      await approvePendingReviews(tg.admin);
      for (const change of await tg.changes.list('pending')) {
        await tg.admin.changes.approve(change.id, approver, totp());
        await tg.admin.changes.approve(change.id, second, secondCode(now));
      }
    });

    after(async () => {
      await inspector?.close();
      await world?.close();
    });

    test('a scope covers the same tool, version and destination in the run; another destination waits; the N+1th waits', async () => {
      const ctx = await run('run-basic');
      const { id, view } = await scoped(ctx, 'ann@customer.example', 3);
      assert.equal(view.scope?.status, 'active');
      assert.equal(view.scope?.calls_used, 1, 'the approved call is the first use');
      assert.deepEqual(view.scope?.destinations, [
        { argument: '/to', value: 'ann@customer.example' },
      ]);

      // Covered: other arguments differ, the destination is the same.
      const second = await pay(ctx, 'ann@customer.example', 120);
      assert.equal(second.kind, 'allow', JSON.stringify(second));
      const pre = (await callRecords(tg, inspector, second.callId)).find(
        (r) => r.kind === 'call.pre',
      );
      assert.equal(pre?.approval_id, id);
      assert.deepEqual(JSON.parse(pre?.details ?? '{}').approval_scope, {
        approval: id,
        use: 2,
        of: 3,
      });

      // Attack: another destination in the same run waits; benign: the approved one still runs.
      pendingId(await pay(ctx, 'bob@customer.example'));
      assert.equal((await pay(ctx, 'ann@customer.example')).kind, 'allow');
      // The N+1th call waits, and the exhaustion is audited once.
      pendingId(await pay(ctx, 'ann@customer.example'));
      const after = await tg.admin.approvals.get(id);
      assert.equal(after.scope?.status, 'exhausted');
      assert.equal(after.scope?.calls_used, 3);
      const exhausted = await inspector.db
        .selectFrom('events')
        .select('details')
        .where('action', '=', 'approval.scope_exhausted')
        .where('subject', '=', `approval:${id}`)
        .execute();
      assert.equal(exhausted.length, 1);
      const granted = await inspector.db
        .selectFrom('events')
        .select('details')
        .where('action', '=', 'approval.approved')
        .where('subject', '=', `approval:${id}`)
        .executeTakeFirstOrThrow();
      assert.equal(JSON.parse(granted.details).scope.calls, 3);
    });

    test('another tool, another version, another run or another principal waits; a session joining the run is covered', async () => {
      const ctx = await run('run-binding');
      await scoped(ctx, 'cat@customer.example', 10);
      pendingId(await pay(ctx, 'cat@customer.example', 100, 'mail_out'));
      pendingId(await pay(ctx, 'cat@customer.example', 100, 'pay_out@1'));
      const elsewhere = await run('run-other');
      pendingId(await pay(elsewhere, 'cat@customer.example'));
      const otherKey = await run('run-binding', { ...who, credential: 'cred-b' });
      pendingId(await pay(otherKey, 'cat@customer.example'));
      // Benign: another session of the same principal in the same run.
      const joined = await run('run-binding');
      assert.equal((await pay(joined, 'cat@customer.example')).kind, 'allow');
    });

    test('the amount, the time and a revoke bound a scope', async () => {
      const ctx = await run('run-amount');
      await scoped(ctx, 'dan@customer.example', 10, 250);
      assert.equal((await pay(ctx, 'dan@customer.example', 100)).kind, 'allow');
      pendingId(await pay(ctx, 'dan@customer.example', 100));
      assert.equal((await pay(ctx, 'dan@customer.example', 50)).kind, 'allow');

      const timed = await run('run-time');
      await scoped(timed, 'eve@customer.example', 10, undefined, 5);
      assert.equal((await pay(timed, 'eve@customer.example')).kind, 'allow');
      now = new Date(now.getTime() + 6 * 60_000);
      pendingId(await pay(timed, 'eve@customer.example'));

      const revoked = await run('run-revoke');
      const { id } = await scoped(revoked, 'fay@customer.example', 10);
      assert.equal((await pay(revoked, 'fay@customer.example')).kind, 'allow');
      const view = await tg.admin.approvals.revokeScope(id, approver, 'done for today');
      assert.equal(view.scope?.status, 'revoked');
      pendingId(await pay(revoked, 'fay@customer.example'));
      const events = await inspector.db
        .selectFrom('events')
        .select(['details', 'actor'])
        .where('action', '=', 'approval.scope_revoked')
        .where('subject', '=', `approval:${id}`)
        .execute();
      assert.equal(events.length, 1);
      assert.equal(events[0]?.actor, `operator:${approver.id}`);
    });

    test('a destination an untrusted result named is not covered: the call waits', async () => {
      const ctx = await run('run-untrusted');
      await scoped(ctx, 'mallory@customer.example', 10);
      assert.equal((await pay(ctx, 'mallory@customer.example')).kind, 'allow');
      assert.equal((await tg.gate.invoke(ctx, 'read_mail', {})).kind, 'allow');
      const id = pendingId(await pay(ctx, 'mallory@customer.example'));
      const view = await tg.admin.approvals.get(id);
      assert.ok(view.rendered.untrusted_destinations?.length, JSON.stringify(view.rendered));
    });

    test('concurrent calls never take more than N uses', async () => {
      const ctx = await run('run-race');
      await scoped(ctx, 'gus@customer.example', 5);
      const decisions = await Promise.all(
        Array.from({ length: 12 }, () => pay(ctx, 'gus@customer.example')),
      );
      assert.equal(decisions.filter((d) => d.kind === 'allow').length, 4);
      assert.equal(decisions.filter((d) => d.kind === 'pending_approval').length, 8);
    });

    test('a scope needs a second factor; an irreversible call is refused one and is approved alone', async () => {
      const ctx = await run('run-refused');
      const plain = pendingId(await pay(ctx, 'hal@customer.example'));
      const until = new Date(now.getTime() + 600_000).toISOString();
      await assert.rejects(
        tg.admin.approvals.approve(plain, approver, { scope: { calls: 5, until } }),
        (err) => isToolgateError(err) && err.code !== 'APPROVAL_SCOPE_REFUSED',
      );
      assert.equal((await tg.admin.approvals.get(plain)).status, 'pending');
      n += 1;
      const wipe = pendingId(
        await tg.gate.invoke(ctx, 'wipe_account', {
          to: 'hal@customer.example',
          amount: 0,
          note: 'x',
        }),
      );
      await assert.rejects(
        tg.admin.approvals.approve(wipe, approver, { totp: totp(), scope: { calls: 5, until } }),
        (err) =>
          isToolgateError(err) &&
          err.code === 'APPROVAL_SCOPE_REFUSED' &&
          (err.details as { reason: string }).reason === 'action_class',
      );
      // The benign neighbour: the same irreversible call approved alone.
      const view = await tg.admin.approvals.approve(wipe, approver, { totp: totp() });
      assert.equal(view.status, 'approved');
      assert.equal(view.scope, null);
    });

    test('an external send whose tool declares no destination is refused a scope and approved alone', async () => {
      const ctx = await run('run-unbound');
      const blast = pendingId(await pay(ctx, 'ivy@customer.example', 100, 'blast_out'));
      const until = new Date(now.getTime() + 600_000).toISOString();
      await assert.rejects(
        tg.admin.approvals.approve(blast, approver, { totp: totp(), scope: { calls: 5, until } }),
        (err) =>
          isToolgateError(err) &&
          err.code === 'APPROVAL_SCOPE_REFUSED' &&
          (err.details as { reason: string }).reason === 'not_bindable',
      );
      assert.equal((await tg.admin.approvals.get(blast)).status, 'pending');
      const view = await tg.admin.approvals.approve(blast, approver, { totp: totp() });
      assert.equal(view.status, 'approved');
      // Approved alone: the next send to someone else waits again.
      assert.equal(
        (await pay(ctx, 'mallory@evil.example', 100, 'blast_out')).kind,
        'pending_approval',
      );
    });
  });
}
