/** The `session` step: the caller's own open session, its audit fields, and suspension. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { harnessForFile } from './step-harness.js';

const { h } = harnessForFile();

test("the call's state gets the session, the decision time and the shared audit fields", async () => {
  const ctx = await h.open();
  const s = h.state({ ...ctx, model: 'm'.repeat(300) }, 'echo', {});
  assert.equal(await h.step(s, 'session'), undefined);
  assert.equal(s.session.id, ctx.sessionId);
  assert.equal(s.now.getTime(), h.now.getTime());
  assert.equal(s.base.sessionId, ctx.sessionId);
  assert.equal(s.base.runId, s.session.run_id);
  assert.equal(s.base.model?.length, 200, 'the reported model is bounded');
});

test('a suspended session is refused with SESSION_SUSPENDED', async () => {
  const ctx = await h.open();
  await h.tg.sessions.suspend(ctx.sessionId);
  const s = h.state(ctx, 'echo', {});
  const r = await h.step(s, 'session');
  assert.equal(r?.kind, 'refuse');
  assert.equal(r?.kind === 'refuse' ? r.code : '', 'SESSION_SUSPENDED');
});

test("another agent's session is not found: nothing to decide for", async () => {
  const ctx = await h.open();
  const s = h.state({ agentId: 'nobody', sessionId: ctx.sessionId }, 'echo', {});
  await assert.rejects(h.step(s, 'session'), { code: 'SESSION_NOT_FOUND' });
});
