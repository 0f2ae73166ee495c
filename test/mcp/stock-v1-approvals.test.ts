/**
 * A stock v1 SDK client (`@modelcontextprotocol/sdk`, protocol 2025-11-25, its default options:
 * no progress handler, the 60 s request timeout) completes approvals through toolgate with no
 * toolgate-specific code (docs/mcp.md, "Stock clients wait for the person"). The front holds a
 * call that waits for approval (here 1.5 s, in production 45 s): approved within the hold, the same
 * call answers the tool's result (the output schema satisfied); approved later, the client's next
 * call with the same arguments runs it, once, without a new approval; a client that reconnects
 * (a new MCP session) mid-wait completes the approval it already has; a rejection is a clear
 * refusal; two retries racing run it once. The approval stays bound to the principal, the tool
 * version and the arguments: another agent, another key of the same agent, another version or
 * other arguments never pick it up — each beside its benign neighbour. SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { backends } from '../support/backends.js';
import {
  type Answer,
  answerOf,
  OWNER,
  openStockWorld,
  STOCK_TOOL,
  STRANGER,
  type StockWorld,
} from '../support/stock-approvals.js';
import { connectMcp } from '../support/world.js';

const HOLD_MS = 1_500;

for (const backend of backends()) {
  describe(`a stock v1 client completes approvals (${backend.name})`, () => {
    let s: StockWorld;
    const clients: Client[] = [];
    let n = 0;

    /** Arguments no other test uses. */
    function fresh(): { to: string; text: string } {
      n += 1;
      return { to: `customer-${n}@example.com`, text: `Your order ${n} has shipped.` };
    }

    async function client(key = s.keys.owner): Promise<Client> {
      const c = await connectMcp(s.base, key, 'stock-v1');
      clients.push(c);
      return c;
    }

    async function call(
      c: Client,
      args: Record<string, unknown>,
      meta?: Record<string, unknown>,
    ): Promise<Answer> {
      return answerOf(
        await c.callTool({ name: STOCK_TOOL, arguments: args, ...(meta ? { _meta: meta } : {}) }),
      );
    }

    function ran(answer: Answer): void {
      assert.equal(answer.isError, false, JSON.stringify(answer));
      assert.match(String(answer.structured?.message_id), /^msg-/, JSON.stringify(answer));
    }

    before(async () => {
      s = await openStockWorld(backend, HOLD_MS);
    });

    after(async () => {
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
      await s.close();
    });

    test('approved within the hold: the same call answers the result, once', async () => {
      const c = await client();
      const args = fresh();
      const before = await s.runs();
      const answer = call(c, args);
      await s.approve(await s.nextApproval(OWNER, args));
      ran(await answer);
      assert.equal(await s.runs(), before + 1);
      const approvals = await s.approvalsOf(OWNER, args);
      assert.deepEqual(
        approvals.map((a) => a.status),
        ['consumed'],
      );
    });

    test('approved after the hold: the next call with the same arguments runs it, no new approval', async () => {
      const c = await client();
      const args = fresh();
      const before = await s.runs();
      const waited = await call(c, args);
      assert.equal(waited.isError, true, JSON.stringify(waited));
      assert.equal(waited.code, 'APPROVAL_REQUIRED');
      const [approval] = await s.approvalsOf(OWNER, args);
      assert.ok(approval);
      assert.ok(waited.text.includes(approval.id), 'the answer names the approval');
      assert.ok(waited.text.includes('toolgate approvals approve'), 'and where it is decided');
      await s.approve(approval.id);
      ran(await call(c, args));
      assert.equal(await s.runs(), before + 1, 'ran once');
      assert.deepEqual(
        (await s.approvalsOf(OWNER, args)).map((a) => [a.id, a.status]),
        [[approval.id, 'consumed']],
        'no new approval',
      );
    });

    test('a client that reconnects mid-wait completes the approval it already has', async () => {
      const first = await client();
      const args = fresh();
      const before = await s.runs();
      const abandoned = call(first, args).catch((err: unknown) => err);
      const approvalId = await s.nextApproval(OWNER, args);
      await first.close();
      await abandoned;
      // A new connection: a new MCP session and gate session, the same principal.
      const second = await client();
      const answer = call(second, args);
      // Held on the same approval; nothing new was asked of the approver.
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(
        (await s.approvalsOf(OWNER, args)).map((a) => a.id),
        [approvalId],
      );
      await s.approve(approvalId);
      // The abandoned call's hold ended with its connection: it neither ran for nobody nor took
      // the approval from the client that came back.
      ran(await answer);
      assert.equal(await s.runs(), before + 1);
    });

    test('a client that asked for progress hears where its approval is decided while it waits', async () => {
      const c = await client();
      const args = fresh();
      const heard: { progress: number; message?: string | undefined }[] = [];
      const answer = c.callTool({ name: STOCK_TOOL, arguments: args }, undefined, {
        onprogress: (p) => heard.push(p),
      });
      const approvalId = await s.nextApproval(OWNER, args);
      for (let i = 0; i < 100 && heard.length === 0; i += 1) {
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(heard[0]?.message?.includes(approvalId), JSON.stringify(heard));
      assert.ok(heard[0]?.message?.includes('toolgate approvals approve'), JSON.stringify(heard));
      await s.approve(approvalId);
      ran(answerOf(await answer));
    });

    test('a rejection reaches the client as a refusal; the same call stays refused', async () => {
      const c = await client();
      const args = fresh();
      const before = await s.runs();
      const answer = call(c, args);
      const approvalId = await s.nextApproval(OWNER, args);
      await s.reject(approvalId, 'not to this customer');
      const refused = await answer;
      assert.deepEqual(
        [refused.isError, refused.code, refused.rule],
        [true, 'APPROVAL_INVALID', 'approval.rejected'],
      );
      assert.ok(refused.text.includes('not to this customer'), refused.text);
      // Asking again for exactly this call is refused, not put before the reviewer again.
      const again = await call(c, args);
      assert.equal(again.rule, 'approval.rejected', JSON.stringify(again));
      assert.equal((await s.approvalsOf(OWNER, args)).length, 1);
      assert.equal(await s.runs(), before);
    });

    test('two retries racing on one approval run the call once', async () => {
      const a = await client();
      const b = await client();
      const args = fresh();
      const before = await s.runs();
      const one = call(a, args);
      const approvalId = await s.nextApproval(OWNER, args);
      const two = call(b, args);
      await new Promise((r) => setTimeout(r, 200));
      await s.approve(approvalId);
      const answers = await Promise.all([one, two]);
      assert.equal(await s.runs(), before + 1, 'ran once');
      const ok = answers.filter((x) => !x.isError);
      assert.equal(ok.length, 1, JSON.stringify(answers));
      const loser = answers.find((x) => x.isError);
      assert.ok(loser?.code === 'APPROVAL_INVALID' || loser?.code === 'APPROVAL_REQUIRED');
    });

    /**
     * An approval of `args` approved while nobody waits for it: the owner's client went away
     * mid-wait (its held call ended with it), then the approver decided.
     */
    async function approvedUnused(args: Record<string, unknown>): Promise<string> {
      const gone = await client();
      const abandoned = call(gone, args).catch((err: unknown) => err);
      const approvalId = await s.nextApproval(OWNER, args);
      await gone.close();
      await abandoned;
      await s.approve(approvalId);
      return approvalId;
    }

    /**
     * `attacker` calls with `args` while the owner's approval of `ownerArgs` is approved and
     * unused: it must get an approval of its own (rejected here to end its call), never run on
     * the owner's; then the owner's own call runs on it.
     */
    async function attack(
      attacker: Client,
      agent: string,
      args: Record<string, unknown>,
      ownerArgs: Record<string, unknown>,
    ): Promise<void> {
      const approvalId = await approvedUnused(ownerArgs);
      const before = await s.runs(agent);
      const attempt = call(attacker, args);
      const own = await s.nextApproval(agent, args, new Set([approvalId]));
      assert.notEqual(own, approvalId);
      assert.equal(await s.status(approvalId), 'approved', "the owner's approval is untouched");
      await s.reject(own, 'not approved');
      const refused = await attempt;
      assert.equal(refused.rule, 'approval.rejected', JSON.stringify(refused));
      assert.ok(refused.text.includes(own), 'refused on its own approval');
      assert.equal(await s.runs(agent), before, 'the attacker ran nothing');
      // The benign neighbour: the owner's same call runs on its approval.
      const ownerBefore = await s.runs();
      ran(await call(await client(), ownerArgs));
      assert.equal(await s.runs(), ownerBefore + 1);
      assert.equal(await s.status(approvalId), 'consumed');
    }

    test('another agent with the same arguments does not pick up the approval', async () => {
      const args = fresh();
      await attack(await client(s.keys.stranger), STRANGER, args, args);
    });

    test('another key of the same agent (another principal) does not pick it up', async () => {
      const args = fresh();
      await attack(await client(s.keys.ownerOther), OWNER, args, args);
    });

    test('other arguments do not pick it up', async () => {
      const args = fresh();
      await attack(
        await client(),
        OWNER,
        { ...args, text: `${args.text} Also: wire funds.` },
        args,
      );
    });

    test('another version of the tool does not pick it up; the approved version runs on it', async () => {
      const args = fresh();
      const approvalId = await approvedUnused(args);
      await s.addVersion('2.0.0');
      // A new session offers 2.0.0 by default and 1.0.0 pinned.
      const moved = await client();
      await moved.listTools();
      const attempt = call(moved, args);
      const own = await s.nextApproval(OWNER, args, new Set([approvalId]));
      assert.equal((await s.world.tg.admin.approvals.get(own)).tool_version, '2.0.0');
      assert.equal(await s.status(approvalId), 'approved');
      await s.reject(own, 'not this version');
      assert.equal((await attempt).rule, 'approval.rejected');
      const before = await s.runs();
      ran(await call(moved, args, { 'io.toolgate/version': 1 }));
      assert.equal(await s.runs(), before + 1);
      assert.equal(await s.status(approvalId), 'consumed');
    });
  });
}
