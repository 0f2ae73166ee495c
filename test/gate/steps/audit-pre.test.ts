/** The `audit-pre` step: the pre record is durable before the step returns, with the call's facts. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { harnessForFile } from './step-harness.js';

const { h } = harnessForFile();

test('the pre record is committed when the step returns (before anything runs)', async () => {
  const ctx = await h.open('surfer');
  const { s, r } = await h.at('audit-pre', ctx, 'fetch', { url: 'https://example.com/x' });
  assert.equal(r, undefined);
  // Read without flushing the writer: durable means already in the table.
  const rows = await h.store.db
    .selectFrom('audit_log')
    .select(['kind', 'tool_id', 'args_hash', 'egress_host', 'decision'])
    .where('call_id', '=', s.callId)
    .execute();
  assert.deepEqual(rows, [
    {
      kind: 'call.pre',
      tool_id: 'fetch',
      args_hash: s.argsHash,
      // `fetch` has unconstrained egress: the host is the caller's choice, kept as its keyed hash
      // (docs/security-model.md, "Personal data and the audit log").
      egress_host: h.tg.audit.writer.pseudonyms.token('example.com'),
      decision: 'allow',
    },
  ]);
});
