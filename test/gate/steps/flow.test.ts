/** The `flow` step: after a private read, unconstrained egress is refused — in this session and beyond. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { harnessForFile } from './step-harness.js';

const { h } = harnessForFile();

const flow = (ctx: { agentId: string; sessionId: string }, tool: string, args: unknown) =>
  h.at('flow', ctx, tool, args);

/** Marks the session as having read private data, as a private read would. */
async function privateReadIn(sessionId: string): Promise<void> {
  await h.store.db
    .updateTable('sessions')
    .set({ private_data_read: 1 })
    .where('id', '=', sessionId)
    .execute();
  h.deps.identities.drop();
}

test('unconstrained egress goes on before any private read', async () => {
  const ctx = await h.open('surfer');
  const { s, r } = await flow(ctx, 'fetch', { url: 'https://example.com/' });
  assert.equal(r, undefined);
  assert.deepEqual(s.who, { agentId: 'surfer', userId: null, now: s.now });
});

test("after this session's private read, unconstrained egress is TOXIC_FLOW; other tools go on", async () => {
  const ctx = await h.open('surfer');
  await privateReadIn(ctx.sessionId);
  const { r } = await flow(ctx, 'fetch', { url: 'https://example.com/' });
  assert.ok(r?.kind === 'refuse');
  assert.equal(r.code, 'TOXIC_FLOW');
  const other = await h.open();
  await privateReadIn(other.sessionId);
  assert.equal((await flow(other, 'echo', { invoice: 'I-1' })).r, undefined);
});

test('a private read recorded for the agent refuses egress in a fresh session too', async () => {
  const agent = await h.tg.agents.get('surfer');
  await h.deps.counters.recordPrivateRead(
    { agentId: 'surfer', userId: null, now: h.now },
    agent.ceilings,
  );
  const fresh = await h.open('surfer');
  const { r } = await flow(fresh, 'fetch', { url: 'https://example.com/' });
  assert.ok(r?.kind === 'refuse');
  assert.equal(r.rule, 'flow.private_then_egress');
});
