/** The `idempotency-claim` step: the key is taken once the call may run; a taken key refuses. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { harnessForFile } from './step-harness.js';

const { h, ctx } = harnessForFile({ session: true });

const claim = (key?: string) =>
  h.at(
    'idempotency-claim',
    ctx,
    'echo',
    { invoice: 'I-1' },
    key === undefined ? {} : { idempotencyKey: key },
  );

test('without a key nothing is stored', async () => {
  const { r } = await claim();
  assert.equal(r, undefined);
  const rows = await h.store.db.selectFrom('idempotency').selectAll().execute();
  assert.equal(rows.length, 0);
});

test('the first claim takes the key for this call; a call that raced it past the lookup is refused', async () => {
  const prepare = () =>
    h.before(
      h.state(ctx, 'echo', { invoice: 'I-1' }, { idempotencyKey: 'k' }),
      'idempotency-claim',
    );
  // Both calls looked the key up while it was free; only one may take it.
  const first = await prepare();
  const second = await prepare();
  assert.equal(await h.step(first, 'idempotency-claim'), undefined);
  const row = await h.store.db
    .selectFrom('idempotency')
    .selectAll()
    .where('key', '=', first.idemKey ?? '')
    .executeTakeFirstOrThrow();
  assert.equal(row.call_id, first.callId);
  assert.equal(row.result, null);
  const r = await h.step(second, 'idempotency-claim');
  assert.ok(r?.kind === 'refuse');
  assert.equal(r.code, 'IDEMPOTENCY_CONFLICT');
  assert.equal(r.rule, 'idempotency.in_progress');
});
