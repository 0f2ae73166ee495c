/**
 * A stock v2 SDK client (`@modelcontextprotocol/client`, pinned to protocol 2026-07-28 and
 * otherwise its default options: input-required auto-fulfilment, 10 rounds, the 60 s request
 * timeout per leg) completes approvals through toolgate with no toolgate-specific code (docs/mcp.md,
 * "Stock clients wait for the person"). Each round of the call's multi round-trip request is held
 * (here 2 s; in production 45 s): approved within the client's rounds, the same `callTool` answers
 * the tool's result (the output schema satisfied); past its rounds, the client gets a tool result
 * naming the approval and where it is decided — never INPUT_REQUIRED_ROUNDS_EXCEEDED — and its next
 * call with the same arguments runs the approved call once, without a new approval, up to ten
 * minutes after the decision (a steppable clock). A client that reconnects mid-wait completes the
 * approval it has; a rejection is a clear refusal; the approval stays bound to the principal, the
 * tool version and the arguments — each attack beside its benign neighbour. SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { backends } from '../support/backends.js';
import { steppableClock } from '../support/operators.js';
import {
  type Answer,
  answerOf,
  OWNER,
  openStockWorld,
  STOCK_TOOL,
  STRANGER,
  type StockWorld,
} from '../support/stock-approvals.js';
import { connectModernMcp } from '../support/world.js';

/** The hold of the main world, and of the world whose client runs out of rounds quickly. */
const HOLD_MS = 2_000;
const SHORT_HOLD_MS = 150;

for (const backend of backends()) {
  describe(`a stock v2 client (2026-07-28) completes approvals (${backend.name})`, () => {
    let s: StockWorld;
    let quick: StockWorld;
    const clock = steppableClock();
    const clients: Client[] = [];
    let n = 0;

    function fresh(): { to: string; text: string } {
      n += 1;
      return { to: `customer-${n}@example.com`, text: `Your refund ${n} is on its way.` };
    }

    async function client(world = s, key = world.keys.owner): Promise<Client> {
      const c = await connectModernMcp(world.base, key, 'stock-v2');
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

    /** Runs the client out of its rounds: the answer names the approval, still pending. */
    async function outOfRounds(c: Client, world: StockWorld, args: Record<string, unknown>) {
      const started = Date.now();
      const waited = await call(c, args);
      assert.equal(waited.isError, true, JSON.stringify(waited));
      assert.equal(waited.code, 'APPROVAL_REQUIRED', JSON.stringify(waited));
      const [approval] = await world.approvalsOf(OWNER, args);
      assert.ok(approval);
      assert.ok(waited.text.includes(approval.id), 'the answer names the approval');
      assert.ok(waited.text.includes('toolgate approvals approve'), 'and where it is decided');
      // Held every round: the ten rounds and the first answer took eleven holds.
      assert.ok(Date.now() - started >= 11 * SHORT_HOLD_MS, `${Date.now() - started} ms`);
      return approval.id;
    }

    before(async () => {
      s = await openStockWorld(backend, HOLD_MS, { clock: clock.now });
      quick = await openStockWorld(backend, SHORT_HOLD_MS);
    });

    after(async () => {
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
      await s.close();
      await quick.close();
    });

    test('approved within its rounds: the same callTool answers the result, once', async () => {
      const c = await client();
      const args = fresh();
      const before = await s.runs();
      const answer = call(c, args);
      await s.approve(await s.nextApproval(OWNER, args));
      ran(await answer);
      assert.equal(await s.runs(), before + 1);
      assert.deepEqual(
        (await s.approvalsOf(OWNER, args)).map((a) => a.status),
        ['consumed'],
      );
    });

    test('unpinned (its default negotiation: the 2025-11-25 handshake) the same call answers the result', async () => {
      const v2 = await import('@modelcontextprotocol/client');
      const c = new v2.Client({ name: 'stock-v2-default', version: '1.0.0' });
      await c.connect(
        new v2.StreamableHTTPClientTransport(new URL(`${s.base}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${s.keys.owner}` } },
        }),
      );
      clients.push(c);
      assert.equal(c.getNegotiatedProtocolVersion(), '2025-11-25');
      const args = fresh();
      const before = await s.runs();
      const answer = call(c, args);
      await s.approve(await s.nextApproval(OWNER, args));
      ran(await answer);
      assert.equal(await s.runs(), before + 1);
    });

    test('past its rounds: a tool result naming the approval; the next same call runs it once', async () => {
      const c = await client(quick);
      const args = fresh();
      const before = await quick.runs();
      const approvalId = await outOfRounds(c, quick, args);
      assert.equal(await quick.runs(), before);
      await quick.approve(approvalId);
      ran(await call(c, args));
      assert.equal(await quick.runs(), before + 1, 'ran once');
      assert.deepEqual(
        (await quick.approvalsOf(OWNER, args)).map((a) => [a.id, a.status]),
        [[approvalId, 'consumed']],
        'no new approval',
      );
    });

    /**
     * An approval of `args` approved while nobody waits for it: the owner's client went away
     * mid-wait, then the approver decided.
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

    test('up to ten minutes after the decision the next call runs it; past them it asks anew', async () => {
      const late = fresh();
      await approvedUnused(late);
      clock.advance(9.5 * 60_000);
      const before = await s.runs();
      ran(await call(await client(), late));
      assert.equal(await s.runs(), before + 1);
      // An approval not used within ten minutes of its decision expires unused: the same call then
      // waits for a new decision (the old one is not reused).
      const stale = fresh();
      const staleId = await approvedUnused(stale);
      clock.advance(10.5 * 60_000);
      const asking = call(await client(), stale);
      const renewed = await s.nextApproval(OWNER, stale, new Set([staleId]));
      await s.reject(renewed, 'too late');
      assert.equal((await asking).rule, 'approval.rejected');
      assert.equal(await s.runs(), before + 1);
    });

    test('a client that reconnects mid-wait completes the approval it already has', async () => {
      const first = await client();
      const args = fresh();
      const before = await s.runs();
      const abandoned = call(first, args).catch((err: unknown) => err);
      const approvalId = await s.nextApproval(OWNER, args);
      await first.close();
      await abandoned;
      const second = await client();
      const answer = call(second, args);
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(
        (await s.approvalsOf(OWNER, args)).map((a) => a.id),
        [approvalId],
      );
      await s.approve(approvalId);
      ran(await answer);
      assert.equal(await s.runs(), before + 1);
    });

    test('a rejection reaches the client as a refusal, not a crash of its output schema', async () => {
      const c = await client();
      const args = fresh();
      const before = await s.runs();
      const answer = call(c, args);
      await s.reject(await s.nextApproval(OWNER, args), 'wrong customer');
      const refused = await answer;
      assert.deepEqual(
        [refused.isError, refused.code, refused.rule],
        [true, 'APPROVAL_INVALID', 'approval.rejected'],
      );
      assert.ok(refused.text.includes('wrong customer'), refused.text);
      assert.equal(await s.runs(), before);
    });

    /**
     * `attacker` calls with `args` while the owner's approval of `ownerArgs` is approved and
     * unused (the owner's client went away mid-wait): it must get an approval of its own
     * (rejected here to end its call), never run on the owner's; then the owner's next call runs
     * on it.
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
      // The benign neighbour: the owner's next call runs on its approval.
      const ownerBefore = await s.runs();
      ran(await call(await client(), ownerArgs));
      assert.equal(await s.runs(), ownerBefore + 1);
      assert.equal(await s.status(approvalId), 'consumed');
    }

    test('another agent with the same arguments does not pick up the approval', async () => {
      const args = fresh();
      await attack(await client(s, s.keys.stranger), STRANGER, args, args);
    });

    test('another key of the same agent (another principal) does not pick it up', async () => {
      const args = fresh();
      await attack(await client(s, s.keys.ownerOther), OWNER, args, args);
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
      const moved = await client();
      // Listing follows the catalog: the run now offers 2.0.0 by default and 1.0.0 pinned.
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
