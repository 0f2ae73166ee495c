/** The `approval` step: a call that needs approval waits (audited) with its resolved form; approved, it goes on. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { operator } from '../../support/operators.js';
import { harnessForFile } from './step-harness.js';

const { h, ctx } = harnessForFile({ session: true });

const approval = (tool: string, args: unknown) => h.at('approval', ctx, tool, args);

test('a tool without approval goes on with none', async () => {
  const { s, r } = await approval('echo', { invoice: 'I-1' });
  assert.equal(r, undefined);
  assert.equal(s.approval, null);
});

test('a call that needs approval is pending with what the reviewer sees, and audited', async () => {
  const { s, r } = await approval('approved', { invoice: 'I-1' });
  assert.ok(r?.kind === 'pending_approval');
  assert.equal(r.callId, s.callId);
  assert.equal(r.rendered.tool, 'approved');
  assert.deepEqual(r.rendered.arguments, { invoice: 'I-1' });
  assert.deepEqual(await h.auditOf(s.callId), ['call.pending_approval']);
});

test('once approved, the same call goes on carrying the approval and its approver', async () => {
  const first = await approval('approved', { invoice: 'I-2' });
  assert.ok(first.r?.kind === 'pending_approval');
  await h.tg.approvals.approve(first.r.approvalId, operator('test-admin'));
  const retry = await approval('approved', { invoice: 'I-2' });
  assert.equal(retry.r, undefined);
  assert.equal(retry.s.approval?.approvalId, first.r.approvalId);
  assert.equal(retry.s.approval?.approver, 'operator:test-admin');
});
