/**
 * Approvals of runs that ended are withdrawn: on revoke and close at once, on expiry at the
 * sweep or at the first decision — audited as `approval.withdrawn`, no longer decidable, shown
 * as `withdrawn` by REST. An approval of a live run is left alone. SQLite and PostgreSQL.
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

    test('closing a session withdraws its approvals, approved-but-unused ones too', async () => {
      const waitingOne = await waiting();
      const decision = await tg.agent.invoke(
        { principal: who, sessionId: waitingOne.run },
        'send_note',
        {
          text: 'second note',
        },
      );
      const second = (decision as { approvalId: string }).approvalId;
      await tg.admin.approvals.approve(second, approver);
      await tg.agent.sessions.close(waitingOne.run, who);
      assert.equal((await tg.admin.approvals.get(waitingOne.approvalId)).status, 'withdrawn');
      assert.equal((await tg.admin.approvals.get(second)).status, 'withdrawn');
    });

    test('an expired run: the sweep withdraws its approval; a live one stays', async () => {
      const short = await waiting(60);
      const live = await waiting(3600);
      now = new Date(now.getTime() + 120_000);
      const swept = await tg.admin.sweep();
      assert.ok(swept.withdrawnApprovals >= 1, JSON.stringify(swept));
      const view = await tg.admin.approvals.get(short.approvalId);
      assert.deepEqual(
        { status: view.status, reason: view.reason },
        {
          status: 'withdrawn',
          reason: 'run expired',
        },
      );
      assert.equal((await withdrawnEvents(short.approvalId)).length, 1);
      assert.equal((await tg.admin.approvals.get(live.approvalId)).status, 'pending');
      // A second sweep finds nothing more to do and audits nothing twice.
      await tg.admin.sweep();
      assert.equal((await withdrawnEvents(short.approvalId)).length, 1);
      const listed = await rest('/v1/approvals?status=pending');
      const ids = (listed.body as { approvals: { id: string }[] }).approvals.map((a) => a.id);
      assert.ok(!ids.includes(short.approvalId), 'no longer in the inbox');
      assert.ok(ids.includes(live.approvalId));
    });

    test('an expired run nobody swept: the decision withdraws it instead', async () => {
      const short = await waiting(60);
      now = new Date(now.getTime() + 120_000);
      assert.match(await refusedDecision(short.approvalId), /withdrawn \(run expired\)/);
      assert.equal((await tg.admin.approvals.get(short.approvalId)).status, 'withdrawn');
      assert.equal((await withdrawnEvents(short.approvalId)).length, 1);
    });
  });
}
