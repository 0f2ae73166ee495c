/**
 * Approvals of runs someone ended on purpose are withdrawn: on revoke (by the holder or an
 * operator) and on an operator's close at once, by the sweep or at the first decision for a revoke
 * whose withdrawal did not run — audited as `approval.withdrawn`, no longer decidable, shown as
 * `withdrawn` by REST. A run its client closed, or one that expired, leaves its approvals to the
 * principal, who completes them from its next run. SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../../src/core/index.js';
import { isToolgateError } from '../../src/core/index.js';
import type { Gateway } from '../../src/host/toolgate.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { operator } from '../support/operators.js';
import { approvePendingReviews } from '../support/reviews.js';
import { noteTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';

const admin: Actor = { id: 'test-admin', via: 'library' };
const ADMIN_TOKEN = 'withdrawn-test-admin-token-0123456789abcdef';
const approver = operator('withdrawn-approver');

for (const backend of backends()) {
  describe(`withdrawn approvals (${backend.name})`, () => {
    let tg: Gateway;
    let world: World;
    let base: string;
    let inspector: Store;
    let now = new Date('2026-07-30T10:00:00Z');
    const who = { kind: 'agent' as const, agentId: 'note-bot', credential: 'cred-note' };
    let n = 0;

    /** A run of `who` with one call waiting for approval in it. */
    async function waiting(ttlSeconds?: number): Promise<{ run: string; approvalId: string }> {
      const { handle } = await tg.agent.runs.mint(who, {
        via: 'test',
        ...(ttlSeconds !== undefined ? { ttlSeconds } : {}),
      });
      n += 1;
      const decision = await tg.agent.invoke({ principal: who, sessionId: handle }, 'send_note', {
        text: `note ${n}`,
      });
      assert.equal(decision.kind, 'pending_approval', JSON.stringify(decision));
      return {
        run: handle,
        approvalId: (decision as { approvalId: string }).approvalId,
      };
    }

    async function withdrawnEvents(approvalId: string): Promise<Record<string, unknown>[]> {
      const rows = await inspector.db
        .selectFrom('events')
        .selectAll()
        .where('action', '=', 'approval.withdrawn')
        .where('subject', '=', `approval:${approvalId}`)
        .execute();
      return rows.map((r) => JSON.parse(r.details) as Record<string, unknown>);
    }

    async function refusedDecision(approvalId: string): Promise<string> {
      try {
        await tg.admin.approvals.approve(approvalId, approver);
      } catch (err) {
        assert.ok(isToolgateError(err), String(err));
        assert.equal(err.code, 'APPROVAL_STATE');
        return err.message;
      }
      assert.fail('a withdrawn approval was decided');
    }

    async function rest(path: string): Promise<{ status: number; body: unknown }> {
      const res = await fetch(base + path, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      return { status: res.status, body: await res.json() };
    }

    before(async () => {
      world = await openWorld({
        backend,
        rest: { adminToken: ADMIN_TOKEN },
        options: { clock: () => now },
      });
      ({ tg, base } = world);
      inspector = await openStore(world.db);
      await tg.config.apply(
        [
          { kind: 'Agent', spec: { id: 'note-bot', owner: 'qa' } },
          {
            kind: 'Tool',
            spec: noteTool({ text: { type: 'string' } }),
          },
          { kind: 'Grant', spec: { agent: 'note-bot', capabilities: ['note:send'] } },
        ],
        admin,
      );
      await approvePendingReviews(tg.admin);
    });

    after(async () => {
      await inspector.close();
      await world.close();
    });

    test('revoking a run withdraws its waiting approval, audited, undecidable, shown so', async () => {
      const { run, approvalId } = await waiting();
      const neighbour = await waiting();
      await tg.agent.runs.revoke(run, who);
      const view = await tg.admin.approvals.get(approvalId);
      assert.equal(view.status, 'withdrawn');
      assert.equal(view.reason, 'run revoked');
      assert.deepEqual(await withdrawnEvents(approvalId), [
        { session: run, reason: 'run revoked' },
      ]);
      assert.match(await refusedDecision(approvalId), /withdrawn/);
      const listed = await rest('/v1/approvals?status=withdrawn');
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      const ids = (listed.body as { approvals: { id: string; status: string }[] }).approvals.map(
        (a) => a.id,
      );
      assert.ok(ids.includes(approvalId), JSON.stringify(listed.body));
      const one = await rest(`/v1/approvals/${approvalId}`);
      assert.equal((one.body as { status?: string }).status, 'withdrawn', JSON.stringify(one.body));
      // The benign neighbour: another run's approval is still waiting and can be decided.
      assert.equal((await tg.admin.approvals.get(neighbour.approvalId)).status, 'pending');
      assert.equal(
        (await tg.admin.approvals.approve(neighbour.approvalId, approver)).status,
        'approved',
      );
    });

    test("a run its client closed leaves its approvals to the principal; an operator's close withdraws them", async () => {
      const waitingOne = await waiting();
      const decision = await tg.agent.invoke(
        { principal: who, sessionId: waitingOne.run },
        'send_note',
        { text: 'second note' },
      );
      const second = (decision as { approvalId: string }).approvalId;
      await tg.admin.approvals.approve(second, approver);
      await tg.agent.sessions.close(waitingOne.run, who);
      assert.equal((await tg.admin.approvals.get(waitingOne.approvalId)).status, 'pending');
      assert.equal((await tg.admin.approvals.get(second)).status, 'approved');
      assert.deepEqual(await withdrawnEvents(second), []);
      // The principal's next run (a client that reconnected) completes the approved one.
      const next = await tg.agent.runs.mint(who, { via: 'test' });
      const ran = await tg.agent.invoke({ principal: who, sessionId: next.handle }, 'send_note', {
        text: 'second note',
      });
      assert.equal(ran.kind, 'allow', JSON.stringify(ran));
      assert.equal((await tg.admin.approvals.get(second)).status, 'consumed');
      // An operator closing a run ends it on purpose: what waits in it is withdrawn.
      const closed = await waiting();
      await tg.admin.sessions.closeBy(closed.run, admin, 'stop this run');
      const view = await tg.admin.approvals.get(closed.approvalId);
      assert.deepEqual(
        { status: view.status, reason: view.reason },
        { status: 'withdrawn', reason: 'run closed by an operator' },
      );
    });

    test("an expired run leaves its approval decidable; the sweep withdraws only a revoked run's", async () => {
      const short = await waiting(60);
      const live = await waiting(3600);
      const revoked = await waiting(3600);
      // A revoke whose withdrawal never ran (the process stopped in between): the sweep does it.
      await inspector.db
        .updateTable('sessions')
        .set({ status: 'revoked' })
        .where('id', '=', revoked.run)
        .execute();
      now = new Date(now.getTime() + 120_000);
      const swept = await tg.admin.sweep();
      assert.equal(swept.withdrawnApprovals, 1, JSON.stringify(swept));
      assert.equal((await tg.admin.approvals.get(revoked.approvalId)).status, 'withdrawn');
      assert.equal((await withdrawnEvents(revoked.approvalId)).length, 1);
      assert.equal((await tg.admin.approvals.get(short.approvalId)).status, 'pending');
      assert.equal((await tg.admin.approvals.get(live.approvalId)).status, 'pending');
      // A second sweep finds nothing more to do and audits nothing twice.
      await tg.admin.sweep();
      assert.equal((await withdrawnEvents(revoked.approvalId)).length, 1);
      const listed = await rest('/v1/approvals?status=pending');
      const ids = (listed.body as { approvals: { id: string }[] }).approvals.map((a) => a.id);
      assert.ok(ids.includes(short.approvalId), "the expired run's approval is still in the inbox");
      assert.ok(!ids.includes(revoked.approvalId));
      // Decided, it is completed from the principal's next run.
      await tg.admin.approvals.approve(short.approvalId, approver);
      const next = await tg.agent.runs.mint(who, { via: 'test' });
      const { rendered } = await tg.admin.approvals.get(short.approvalId);
      const text = (rendered.arguments as { text?: unknown }).text;
      const ran = await tg.agent.invoke({ principal: who, sessionId: next.handle }, 'send_note', {
        text,
      });
      assert.equal(ran.kind, 'allow', JSON.stringify(ran));
    });

    test('a revoked run nobody swept: the decision withdraws it instead', async () => {
      const cut = await waiting(3600);
      await inspector.db
        .updateTable('sessions')
        .set({ status: 'revoked' })
        .where('id', '=', cut.run)
        .execute();
      assert.match(await refusedDecision(cut.approvalId), /withdrawn \(run revoked\)/);
      assert.equal((await tg.admin.approvals.get(cut.approvalId)).status, 'withdrawn');
      assert.equal((await withdrawnEvents(cut.approvalId)).length, 1);
    });
  });
}
