/**
 * Calls held open for an approval are bounded and end cleanly (docs/mcp.md, "Stock clients wait
 * for the person"; docs/operations.md, "Limits and overload", "Stopping"): a held call is a
 * standing wait of its principal — past the agent's bound of waits another call of that agent is
 * answered still pending at once, while another agent's call is still held — it gives its request
 * slot back while it waits, and a stop answers every held call still pending (its approval named)
 * instead of cutting it. Both eras.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client as ClientV2 } from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { drainServer } from '../../src/edge/rest/index.js';
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
import { connectMcp, connectModernMcp } from '../support/world.js';

/** Long enough that only the bound, a decision or the stop ends a held call in these tests. */
const HOLD_MS = 20_000;

const [backend] = backends();

describe('held calls are bounded and end cleanly', () => {
  let s: StockWorld;
  const clients: (Client | ClientV2)[] = [];
  let n = 0;

  function fresh(): { to: string; text: string } {
    n += 1;
    return { to: `customer-${n}@example.com`, text: `Notice ${n}.` };
  }

  async function call(c: Client | ClientV2, args: Record<string, unknown>): Promise<Answer> {
    return answerOf(await c.callTool({ name: STOCK_TOOL, arguments: args }));
  }

  async function legacy(key: string): Promise<Client> {
    const c = await connectMcp(s.base, key, 'hold-bounds');
    clients.push(c);
    return c;
  }

  before(async () => {
    s = await openStockWorld(
      backend ?? assert.fail('no backend'),
      HOLD_MS,
      {},
      // One held call per agent (and per user) at once.
      { standing: { waits: { max: 16, maxPerAgent: 1, maxPerUser: 1 } } },
    );
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    // The stop test closed it already.
    await s.close().catch(() => {});
  });

  test("past the agent's bound of held calls the next is answered at once; another agent's is held", async () => {
    const first = await legacy(s.keys.owner);
    const args = fresh();
    const held = call(first, args);
    const approvalId = await s.nextApproval(OWNER, args);
    // The same agent's second call finds no room to wait: answered still pending at once.
    const second = await legacy(s.keys.owner);
    const started = Date.now();
    const other = fresh();
    const quick = await call(second, other);
    assert.equal(quick.code, 'APPROVAL_REQUIRED', JSON.stringify(quick));
    assert.ok(Date.now() - started < HOLD_MS / 2, `${Date.now() - started} ms`);
    // Another agent has a bound of its own: its call is held until decided.
    const stranger = await legacy(s.keys.stranger);
    const theirs = fresh();
    const strangerCall = call(stranger, theirs);
    const strangerApproval = await s.nextApproval(STRANGER, theirs);
    await s.approve(strangerApproval);
    assert.equal((await strangerCall).isError, false);
    await s.approve(approvalId);
    assert.equal((await held).isError, false);
  });

  test('a call that asks for a shorter hold (io.toolgate/approval-wait) gets it', async () => {
    const c = await legacy(s.keys.stranger);
    const started = Date.now();
    const args = fresh();
    const answer = answerOf(
      await c.callTool({
        name: STOCK_TOOL,
        arguments: args,
        _meta: { 'io.toolgate/approval-wait': 300 },
      }),
    );
    assert.equal(answer.code, 'APPROVAL_REQUIRED', JSON.stringify(answer));
    const took = Date.now() - started;
    assert.ok(took >= 300 && took < HOLD_MS / 2, `${took} ms`);
    // Its approval is kept for the next call: nothing was lost by answering early.
    assert.equal((await s.approvalsOf(STRANGER, args)).length, 1);
  });

  test('a stop answers every held call still pending, in both eras, naming its approval', async () => {
    const old = await legacy(s.keys.owner);
    const modern = await connectModernMcp(s.base, s.keys.stranger, 'hold-bounds');
    clients.push(modern);
    const mine = fresh();
    const theirs = fresh();
    const oldCall = call(old, mine);
    const modernCall = call(modern, theirs).catch((err: unknown) => err);
    const mineId = await s.nextApproval(OWNER, mine);
    await s.nextApproval(STRANGER, theirs);
    const started = Date.now();
    // As `serve` stops (docs/operations.md, "Stopping"): calls in flight may finish.
    const app = s.world.app ?? assert.fail('no server');
    const closing = drainServer(app, 10_000);
    const answer = await oldCall;
    assert.equal(answer.code, 'APPROVAL_REQUIRED', JSON.stringify(answer));
    assert.ok(answer.text.includes(mineId));
    assert.ok(Date.now() - started < HOLD_MS / 2, 'ended by the stop, not by the bound');
    // The 2026-07-28 client's round ends with its state; its next round finds the server gone.
    await modernCall;
    assert.equal((await closing).cut, false, 'nothing had to be cut');
  });
});
