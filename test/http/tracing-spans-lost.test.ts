/**
 * No trace span is lost without a count (docs/operations.md, "Metrics" and "Tracing"): spans the
 * batch processor drops because its queue is full, and spans whose export fails or times out,
 * are counted on `/metrics` as `toolgate_trace_spans_total` by outcome, beside the ones a real
 * OTLP receiver took. A collector that is hung or gone at the gateway's close neither fails nor
 * holds it. With tracing off the counter is declared and has no sample.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { tracingConfigFromEnv } from '../../src/operations/tracing/index.js';
import { startOtlpReceiver } from '../support/otlp-receiver.js';
import { openWorld, restClient, type World } from '../support/world.js';

const AGENT = { id: 'spans-bot', capabilities: ['tickets:read'] };

/** The samples of `toolgate_trace_spans_total` on /metrics, by outcome. */
async function spanCounts(world: World): Promise<Record<string, number>> {
  const res = await fetch(`${world.base}/metrics`, {
    headers: { authorization: `Bearer ${world.adminToken}` },
  });
  assert.equal(res.status, 200);
  const text = await res.text();
  assert.match(text, /^# TYPE toolgate_trace_spans_total counter$/m);
  const counts: Record<string, number> = {};
  for (const m of text.matchAll(/^toolgate_trace_spans_total\{outcome="(\w+)"\} (\d+)$/gm)) {
    counts[m[1] ?? ''] = Number(m[2]);
  }
  return counts;
}

/** `n` REST calls of search_tickets in one session, each allowed. */
async function calls(world: World, n: number): Promise<void> {
  const rest = restClient(() => world.base, world.keys[AGENT.id] ?? '');
  const sid = ((await rest('POST', '/v1/sessions', {})).body as { id: string }).id;
  for (let i = 0; i < n; i++) {
    const res = await rest('POST', `/v1/sessions/${sid}/calls`, {
      tool: 'search_tickets',
      arguments: { query: `q${i}` },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  }
}

async function traced(env: Record<string, string>): Promise<World> {
  const tracing = tracingConfigFromEnv({
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_TRACES_SAMPLER: 'always_on',
    ...env,
  });
  assert.ok(tracing);
  return openWorld({ demo: true, rest: true, agents: [AGENT], options: { tracing } });
}

test('spans a real receiver took are counted as exported; none failed or dropped', async () => {
  const receiver = await startOtlpReceiver();
  const world = await traced({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: '20',
  });
  try {
    await calls(world, 5);
    await receiver.waitFor((spans) => spans.filter((s) => s.parentSpanId === '').length >= 5);
    let counts: Record<string, number> = {};
    for (let i = 0; i < 100; i++) {
      counts = await spanCounts(world);
      if ((counts.exported ?? 0) >= receiver.spans.length) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(counts.exported, receiver.spans.length, JSON.stringify(counts));
    assert.equal(counts.failed, 0);
    assert.equal(counts.dropped, 0);
  } finally {
    await world.close();
    await receiver.close();
  }
});

test('a receiver that never answers: spans past the queue are dropped, a timed-out export failed, each counted; the close neither fails nor hangs', async () => {
  // Takes each request and never answers it: the first export hangs until its timeout, and the
  // spans ended meanwhile fill the queue.
  const hung: Server = createServer(() => {});
  await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
  const world = await traced({
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(hung.address() as AddressInfo).port}`,
    OTEL_BSP_SCHEDULE_DELAY: '10',
    OTEL_BSP_MAX_QUEUE_SIZE: '8',
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '8',
    OTEL_BSP_EXPORT_TIMEOUT: '300',
  });
  try {
    // Each call ends several spans: 20 calls are far more than one export and a queue of 8.
    await calls(world, 20);
    let counts: Record<string, number> = {};
    for (let i = 0; i < 200; i++) {
      counts = await spanCounts(world);
      if ((counts.failed ?? 0) > 0 && (counts.dropped ?? 0) > 0) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.ok((counts.dropped ?? 0) > 0, `dropped: ${JSON.stringify(counts)}`);
    assert.ok((counts.failed ?? 0) > 0, `failed: ${JSON.stringify(counts)}`);
    assert.equal(counts.exported, 0);
    // The close does not fail, and waits for the hung collector no longer than the export
    // timeout: the audit log and the store close whatever the collector does.
    await calls(world, 2);
    const t0 = Date.now();
    await world.close();
    assert.ok(Date.now() - t0 < 3_000, `close took ${Date.now() - t0} ms`);
  } finally {
    await world.close().catch(() => {});
    hung.closeAllConnections();
    await new Promise((r) => hung.close(r));
  }
});

test('a collector gone at the close (connection refused): the close neither fails nor waits past the export timeout', async () => {
  // A port the kernel gave and that nobody listens on any more.
  const gone = createServer();
  await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
  const port = (gone.address() as AddressInfo).port;
  await new Promise((r) => gone.close(r));
  const world = await traced({
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
    OTEL_BSP_SCHEDULE_DELAY: '60000',
    OTEL_BSP_EXPORT_TIMEOUT: '500',
  });
  let closed = false;
  try {
    await calls(world, 3);
    // The exporter retries a refused connection until the export timeout; the close waits no
    // longer, and does not fail.
    const t0 = Date.now();
    await world.close();
    closed = true;
    assert.ok(Date.now() - t0 < 3_000, `close took ${Date.now() - t0} ms`);
  } finally {
    if (!closed) await world.close().catch(() => {});
  }
});

test('tracing off: the counter is declared, with no sample', async () => {
  const world = await openWorld({ demo: true, rest: true, agents: [AGENT] });
  try {
    await calls(world, 1);
    assert.deepEqual(await spanCounts(world), {});
  } finally {
    await world.close();
  }
});
