/**
 * Read then egress, in the order the committed log delivers records when the read ran on one
 * replica and the egress on another: the read's post-record may be committed after the agent had
 * its result, and after the egress that followed. The read counts from its allowed pre-record,
 * which is durable before the tool runs (docs/architecture.md §5). The gate-driven story is in
 * detectors.test.ts, and two replicas behind a balancer in test/replicas/replicas-agree.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AuditRecord } from '../../src/gate/index.js';
import type { Observed, ToolFacts } from '../../src/operations/detectors/index.js';
import { ReadThenEgressDetector } from '../../src/operations/detectors/read-then-egress.js';

const search: ToolFacts = {
  id: 'search_tickets',
  actionClass: 'read',
  dataAccess: 'private',
  egress: 'none',
};
const httpGet: ToolFacts = {
  id: 'http_get',
  actionClass: 'read',
  dataAccess: 'public',
  egress: 'constrained',
};
const privateFetch: ToolFacts = {
  id: 'crm_export',
  actionClass: 'read',
  dataAccess: 'private',
  egress: 'constrained',
};
const t0 = Date.parse('2026-06-01T10:00:00Z');

function rec(
  kind: AuditRecord['kind'],
  tool: ToolFacts,
  callId: string,
  ms: number,
  extra: Partial<AuditRecord> = {},
): Observed {
  const record: AuditRecord = {
    kind,
    at: new Date(t0 + ms),
    callId,
    sessionId: 'ses_1',
    runId: 'ses_1',
    agentId: 'bot',
    userId: null,
    toolId: tool.id,
    toolVersion: '1.0.0',
    argsHash: null,
    argsRedacted: undefined,
    decision: 'allow',
    ...(kind === 'call.post' ? { outcome: 'ok' } : {}),
    ...extra,
  };
  return { record, tool, agentReadOnly: null };
}

const detector = () => new ReadThenEgressDetector({ window_seconds: 300 });

test('the egress committed before the read’s post-record still fires (the cross-replica order)', () => {
  const d = detector();
  assert.deepEqual(d.observe(rec('call.pre', search, 'c1', 0)), []);
  const alerts = d.observe(rec('call.pre', httpGet, 'c2', 12));
  assert.equal(alerts.length, 1);
  assert.equal(alerts[0]?.details.read_tool, 'search_tickets');
  assert.equal(alerts[0]?.details.egress_tool, 'http_get');
  // The read's post-record, late: nothing more, and no second alert for the same egress tool.
  assert.deepEqual(d.observe(rec('call.post', search, 'c1', 8)), []);
  assert.deepEqual(d.observe(rec('call.pre', httpGet, 'c3', 20)), []);
});

test('the same egress with no private read before it, or a denied read, does not fire', () => {
  const quiet = detector();
  assert.deepEqual(quiet.observe(rec('call.pre', httpGet, 'c1', 0)), []);
  const denied = detector();
  denied.observe(rec('call.denied', search, 'c1', 0, { decision: 'deny' }));
  assert.deepEqual(denied.observe(rec('call.pre', httpGet, 'c2', 10)), []);
});

test('a read whose post-record says it failed no longer counts; an earlier read still does', () => {
  const failed = detector();
  failed.observe(rec('call.pre', search, 'c1', 0));
  failed.observe(rec('call.post', search, 'c1', 5, { outcome: 'error' }));
  assert.deepEqual(failed.observe(rec('call.pre', httpGet, 'c2', 10)), []);

  const earlier = detector();
  earlier.observe(rec('call.pre', search, 'c1', 0));
  earlier.observe(rec('call.post', search, 'c1', 5));
  earlier.observe(rec('call.pre', search, 'c2', 6));
  earlier.observe(rec('call.post', search, 'c2', 8, { outcome: 'error' }));
  const alerts = earlier.observe(rec('call.pre', httpGet, 'c3', 10));
  assert.equal(alerts.length, 1);
});

test('a private tool with egress is judged against the read before it, never against itself', () => {
  const alone = detector();
  assert.deepEqual(alone.observe(rec('call.pre', privateFetch, 'c1', 0)), []);
  assert.deepEqual(alone.observe(rec('call.post', privateFetch, 'c1', 5)), []);
  const after = detector();
  after.observe(rec('call.pre', search, 'c1', 0));
  assert.equal(after.observe(rec('call.pre', privateFetch, 'c2', 10)).length, 1);
});

test('an egress attempt outside the window after the read does not fire', () => {
  const d = detector();
  d.observe(rec('call.pre', search, 'c1', 0));
  assert.deepEqual(d.observe(rec('call.pre', httpGet, 'c2', 301_000)), []);
});
