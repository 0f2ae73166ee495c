/**
 * @module `npm run bench:owners`: what owner notices cost (docs/architecture.md §8, C16). The
 * error-rate window is fed every committed call record, so it is measured against the baseline
 * the same records already pay: the Prometheus metrics' `observeCommitted`, in the same run, over
 * the same records (10,000 tool versions, 1 in 17 calls failing). Then the portfolio audit's
 * redundancy pass over 10,000 tools. Prints one JSON object as its last line.
 */

import type { AuditRecord } from '../src/gate/index.js';
import { GatewayMetrics } from '../src/operations/metrics/index.js';
import { ErrorRateWindow } from '../src/operations/owners/index.js';
import { redundancy } from '../src/operations/reports/portfolio-audit.js';

const TOOLS = 10_000;
const RECORDS = 400_000;
const T0 = Date.parse('2026-03-02T09:00:00Z');

const records: AuditRecord[] = Array.from({ length: RECORDS }, (_, i) => ({
  kind: 'call.post',
  at: new Date(T0 + i * 5),
  callId: `c${i}`,
  sessionId: 's',
  runId: null,
  agentId: 'bot',
  userId: null,
  toolId: `tool_${i % TOOLS}`,
  toolVersion: '1.0.0',
  argsHash: null,
  argsRedacted: undefined,
  decision: i % 17 === 0 ? 'deny' : 'allow',
  outcome: i % 17 === 0 ? 'execute.error' : 'ok',
  durationMs: 3,
}));

function time(fn: () => void): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

const BATCH = 256;
const metrics = new GatewayMetrics();
const window = new ErrorRateWindow();
// Warm both once, then measure.
for (let i = 0; i < 20_000; i += BATCH) metrics.observeCommitted(records.slice(i, i + BATCH), 1);
for (let i = 0; i < 20_000; i++) {
  const r = records[i];
  if (r) window.observe(r.toolId ?? '', '1.0.0', r.at.getTime(), r.outcome !== 'ok');
}
const baselineMs = time(() => {
  for (let i = 0; i < RECORDS; i += BATCH) metrics.observeCommitted(records.slice(i, i + BATCH), 1);
});
let crossings = 0;
const windowMs = time(() => {
  for (const r of records)
    if (window.observe(r.toolId ?? '', '1.0.0', r.at.getTime(), r.outcome !== 'ok')) crossings += 1;
});

let seed = 7;
const rnd = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};
const vocab = Array.from({ length: 3_000 }, (_, i) => `word${i}`);
const entries = Array.from({ length: TOOLS }, (_, i) => ({
  tool: { id: `tool_${i}`, action_class: 'read' } as Parameters<
    typeof redundancy
  >[0][number]['tool'],
  caps: [`cap${i % 2_000}`],
  words: new Set(Array.from({ length: 12 }, () => vocab[Math.floor(rnd() * vocab.length)] ?? '')),
}));
let overlapping = 0;
const redundancyMs = time(() => {
  overlapping = redundancy(entries).size;
});

console.log(
  JSON.stringify({
    bench: 'owners',
    records: RECORDS,
    tool_versions: TOOLS,
    metrics_ns_per_record: Math.round((baselineMs * 1e6) / RECORDS),
    error_rate_ns_per_record: Math.round((windowMs * 1e6) / RECORDS),
    ratio_to_metrics: Math.round((windowMs / baselineMs) * 100) / 100,
    crossings,
    redundancy_tools: TOOLS,
    redundancy_ms: Math.round(redundancyMs),
    tools_with_overlap: overlapping,
  }),
);
