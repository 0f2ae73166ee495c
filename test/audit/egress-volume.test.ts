/**
 * Egress bytes above a tool's p99. Bytes out on a call's result record are what the egress proxy
 * counted (inline tools send nothing), so the detector is driven here with the records a proxied
 * tool produces; fan-out is driven through the real gate in detectors.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AuditRecord } from '../../src/gate/index.js';
import { EgressVolumeDetector } from '../../src/operations/detectors/egress-volume.js';
import type { Observed } from '../../src/operations/detectors/index.js';

const tool = {
  id: 'upload',
  actionClass: 'external_send',
  dataAccess: 'none',
  egress: 'constrained',
};
let t = Date.parse('2026-06-01T10:00:00Z');

function post(bytesOut: number, toolFacts = tool): Observed {
  t += 1000;
  const record: AuditRecord = {
    kind: 'call.post',
    at: new Date(t),
    callId: `call_${t}`,
    sessionId: 'ses_1',
    runId: 'ses_1',
    agentId: 'bot',
    userId: null,
    toolId: toolFacts.id,
    toolVersion: '1.0.0',
    argsHash: null,
    argsRedacted: undefined,
    decision: 'allow',
    outcome: 'ok',
    bytesOut,
  };
  return { record, tool: toolFacts, agentReadOnly: null };
}

test('egress bytes above the tool’s p99 fire once history is long enough; usual sizes do not', () => {
  const d = new EgressVolumeDetector({ min_history: 20, fan_out: 10 });
  // Before min_history results even a large transfer is not judged.
  assert.deepEqual(d.observe(post(50_000)), []);
  for (let i = 0; i < 100; i++) assert.deepEqual(d.observe(post(1000 + (i % 50))), [], `call ${i}`);
  assert.deepEqual(d.observe(post(1040)), []);
  const alerts = d.observe(post(60_000));
  assert.equal(alerts.length, 1);
  assert.equal(alerts[0]?.detector, 'egress_volume');
  assert.equal(alerts[0]?.details.bytes_out, 60_000);
  assert.ok(Number(alerts[0]?.details.p99_bytes) < 60_000);
});

test('a tool without egress, or a result record with no bytes out, is never judged', () => {
  const d = new EgressVolumeDetector({ min_history: 1, fan_out: 10 });
  const local = { ...tool, id: 'local', egress: 'none' };
  for (let i = 0; i < 30; i++) d.observe(post(10, local));
  assert.deepEqual(d.observe(post(1_000_000, local)), []);
});

test('the baseline is the last 1,000 results: old large transfers age out of the p99', () => {
  const d = new EgressVolumeDetector({ min_history: 20, fan_out: 10 });
  const bulk = { ...tool, id: 'bulk' };
  // A busy past: 1,000 results of ~1 MB.
  for (let i = 0; i < 1000; i++) d.observe(post(1_000_000 + i, bulk));
  // 50 KB is well under that history's p99.
  assert.deepEqual(d.observe(post(50_000, bulk)), []);
  // Then 1,000 small results push every large one out of the window …
  for (let i = 0; i < 1000; i++) d.observe(post(1000 + (i % 10), bulk));
  // … and the same 50 KB is now above the p99.
  const alerts = d.observe(post(50_000, bulk));
  assert.equal(alerts.length, 1);
  assert.ok(Number(alerts[0]?.details.p99_bytes) < 2000, JSON.stringify(alerts[0]?.details));
  assert.equal(alerts[0]?.details.history, 1000);
});
