/**
 * The waits of calls held for an approval's decision (`ApprovalWaits`, docs/mcp.md "Stock clients
 * wait for the person"), on a desk of their own over the gateway's database, as another process's
 * would be: a decision made by the gateway is found by the poll; only the owner's approval is
 * waited for; past the process bound a wait is answered at once while the one held is still
 * woken; an abort and the bound end a wait as still pending. SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApprovalDesk, ApprovalSigner, ApprovalWaits } from '../../src/domain/decisions/index.js';
import { openStore, type Store } from '../../src/records/store/index.js';
import { backends } from '../support/backends.js';
import { operator } from '../support/operators.js';
import { noteTool } from '../support/tools.js';
import { openWorld, type World } from '../support/world.js';

const approver = operator('waits-approver');
const who = { kind: 'agent' as const, agentId: 'note-bot', credential: 'key:waits' };
const owner = { agentId: 'note-bot', userId: null, credential: 'key:waits' };

for (const backend of backends()) {
  describe(`held calls' waits (${backend.name})`, () => {
    let world: World;
    let store: Store;
    let waits: ApprovalWaits;
    let n = 0;

    /** A pending approval of `who`, asked in a run of its own. */
    async function pending(): Promise<string> {
      const { handle } = await world.tg.agent.runs.mint(who, { via: 'test' });
      n += 1;
      const d = await world.tg.agent.invoke({ principal: who, sessionId: handle }, 'send_note', {
        text: `note ${n}`,
      });
      assert.equal(d.kind, 'pending_approval', JSON.stringify(d));
      return (d as { approvalId: string }).approvalId;
    }

    const wait = (
      id: string,
      timeoutMs = 10_000,
      signal = new AbortController().signal,
      of = owner,
    ) => waits.wait(id, of, { timeoutMs, signal });

    before(async () => {
      world = await openWorld({
        backend,
        tools: [noteTool({ text: { type: 'string' } })],
        agents: [{ id: 'note-bot', capabilities: ['note:send'], key: false }],
      });
      store = await openStore(world.db);
      // Another desk on the same database: it learns of the gateway's decisions only by polling.
      const desk = new ApprovalDesk(store.db, ApprovalSigner.generate());
      waits = new ApprovalWaits(desk, { pollMs: 50, maxWaiting: 1 });
    });

    after(async () => {
      await store.close();
      await world.close();
    });

    test('a decision made elsewhere is found by the poll; the process bound answers another at once', async () => {
      const id = await pending();
      const other = await pending();
      const held = wait(id);
      // The bound is one held call, its place taken before its approval is read: the next, asked
      // in the same tick, is answered at once, as still pending.
      const started = Date.now();
      assert.equal(await wait(other), 'pending');
      assert.ok(Date.now() - started < 1_000);
      // The first is held (past a few polls) when the gateway, not this desk, decides.
      await sleep(200);
      await world.tg.admin.approvals.approve(id, approver);
      assert.equal(await held, 'settled');
      // Room again: a wait for an approval already decided is settled at once.
      assert.equal(await wait(id), 'settled');
    });

    test("only the owner's approval is waited for: another principal's is pending at once", async () => {
      const id = await pending();
      const started = Date.now();
      const stranger = { agentId: 'note-bot', userId: null, credential: 'key:another' };
      assert.equal(await wait(id, 10_000, new AbortController().signal, stranger), 'pending');
      assert.equal(await wait('apr_nobody', 10_000), 'pending');
      assert.ok(Date.now() - started < 1_000, 'neither was held');
      // The benign neighbour: the owner's wait is held until the decision.
      const held = wait(id);
      await world.tg.admin.approvals.reject(id, approver, 'no');
      assert.equal(await held, 'settled');
    });

    test('an abort and the bound end a wait as still pending', async () => {
      const id = await pending();
      const abort = new AbortController();
      const aborted = wait(id, 10_000, abort.signal);
      await sleep(100);
      abort.abort();
      assert.equal(await aborted, 'pending');
      const started = Date.now();
      assert.equal(await wait(id, 150), 'pending');
      assert.ok(Date.now() - started >= 140);
    });
  });
}
