/** The `audit-post` step: egress charged, the result record written, private reads and idempotency kept. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { harnessForFile } from './step-harness.js';

const { h } = harnessForFile();

async function session(id: string) {
  return h.store.db
    .selectFrom('sessions')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

test('an allowed private read answers allow, marks the session and keeps the idempotent result', async () => {
  const ctx = await h.open();
  const s = await h.before(
    h.state(ctx, 'private', { invoice: 'I-1' }, { idempotencyKey: 'post-1' }),
    'audit-post',
  );
  const r = await h.step(s, 'audit-post');
  assert.ok(r?.kind === 'allow');
  assert.equal(r.callId, s.callId);
  assert.deepEqual(r.output, { status: 'ok', echo: { invoice: 'I-1' } });
  assert.equal((await session(ctx.sessionId)).private_data_read, 1);
  const stored = await h.store.db
    .selectFrom('idempotency')
    .select('result')
    .where('key', '=', s.idemKey ?? '')
    .executeTakeFirstOrThrow();
  assert.deepEqual(JSON.parse(stored.result ?? 'null'), r.output);
  assert.deepEqual(await h.auditOf(s.callId), ['call.pre', 'call.post']);
});

test('a failed run is denied with its code and its post record says so', async () => {
  const ctx = await h.open();
  const { s, r } = await h.at('audit-post', ctx, 'failing', { invoice: 'I-1' });
  assert.ok(r?.kind === 'deny');
  assert.equal(r.code, 'EXECUTION_FAILED');
  await h.tg.audit.writer.flush();
  const post = await h.store.db
    .selectFrom('audit_log')
    .select(['decision', 'code', 'outcome'])
    .where('call_id', '=', s.callId)
    .where('kind', '=', 'call.post')
    .executeTakeFirstOrThrow();
  assert.deepEqual(post, { decision: 'deny', code: 'EXECUTION_FAILED', outcome: 'execute.error' });
});

test("egress a call moved is added to its session's stored counter", async () => {
  const ctx = await h.open();
  const s = await h.before(h.state(ctx, 'echo', { invoice: 'I-1' }), 'audit-post');
  s.result = { ...s.result, egressSpent: 1234 };
  assert.equal((await h.step(s, 'audit-post'))?.kind, 'allow');
  assert.equal((await session(ctx.sessionId)).egress_bytes, 1234);
});
