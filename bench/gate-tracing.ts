/**
 * Tracing's cost (docs/operations.md, "Tracing"): the gate's allowed call (no policies, the inline
 * no-op tool of bench/gate.ts) on two gateways, tracing off and on — every call sampled, its
 * spans exported by OTLP/HTTP protobuf to a stand-in collector in a process of its own
 * (bench/otlp-sink.mjs), as a real collector is. The goal: p50 on within 5 % of off.
 *
 * How it measures, and why:
 * - Latency: call by call, off and on in turn (which goes first alternates), so that the drift of
 *   the disk or the machine falls on both alike; the ratio of their p50s and p99s.
 * - After every call, timed or not, the event loop takes one turn (`setImmediate`), outside the
 *   timed window, for both gateways alike. A server's requests arrive as I/O events, so its
 *   timers and sockets run between them; an in-process loop of awaited calls does not give them
 *   that chance (SQLite is synchronous: a whole call runs in microtasks), and then the batch
 *   processor's timer never fires and its first export never completes. Measured without the
 *   turn, the processor's queue filled behind that export and 87 % of the spans were dropped:
 *   tracing "on" was then cheaper than real.
 * - CPU: the main thread's CPU time (`process.threadCpuUsage`) over blocks of calls of one gateway
 *   at a time, off and on in turn, and on's close (which exports its last spans): tracing's whole
 *   cost per call, the encoding and sending of spans included, wherever they run.
 * - Spans: those created (5 a call: the call's span and its policy, approval, audit-pre and
 *   execute children) against those the collector received; any difference was dropped or lost.
 *
 * Alone: `npm run bench:tracing` (CALLS=3000 WARMUP=1000 CPU_CALLS=2000); `npm run bench:gate`
 * runs it last. The last line printed is one JSON object.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setImmediate as turn } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { tracingConfigFromEnv } from '../src/operations/tracing/index.js';
import { allowed, benchGateway, gc, r1, r3, stats } from './gate-support.js';

/** The spans of one traced allowed call of an inline tool: the call's and four step children. */
const SPANS_PER_CALL = 5;
const CPU_BLOCK = 250;

interface SinkStats {
  readonly requests: number;
  readonly bytes: number;
  readonly spans: number;
}

/** The stand-in collector, in a child process; its URL, its counts, and its end. */
async function startSink() {
  const child = fork(fileURLToPath(new URL('./otlp-sink.mjs', import.meta.url)), [], {
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { port: number }).port));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the OTLP sink exited (${code})`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    stats: () =>
      new Promise<SinkStats>((resolve) => {
        child.once('message', (m) => resolve(m as SinkStats));
        child.send('stats');
      }),
    close: () => child.disconnect(),
  };
}

const cpuMicros = (since?: NodeJS.CpuUsage) => {
  const c = process.threadCpuUsage(since);
  return c.user + c.system;
};

/**
 * Tracing off against on, as the module comment says: latency ratios, CPU per call, and spans
 * created against exported.
 */
export async function tracingOverhead(
  dir: string,
  calls: number,
  warmup: number,
  cpuCalls: number,
) {
  const sink = await startSink();
  try {
    const off = await benchGateway(join(dir, 'trace-off.db'), null);
    const on = await benchGateway(
      join(dir, 'trace-on.db'),
      tracingConfigFromEnv({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: sink.url }),
    );
    type Side = typeof off;
    const call = (g: Side) => allowed(g.tg, g.ctx, 'read_doc', {});
    let onCalls = 0;
    for (let i = 0; i < warmup; i++) {
      await call(off);
      await turn();
      await call(on);
      await turn();
    }
    onCalls += warmup;
    gc();

    const offSamples = new Array<number>(calls);
    const onSamples = new Array<number>(calls);
    const timed = async (g: Side, out: number[], i: number) => {
      const s = performance.now();
      await call(g);
      out[i] = performance.now() - s;
      await turn();
    };
    for (let i = 0; i < calls; i++) {
      if (i % 2 === 0) {
        await timed(off, offSamples, i);
        await timed(on, onSamples, i);
      } else {
        await timed(on, onSamples, i);
        await timed(off, offSamples, i);
      }
    }
    onCalls += calls;

    // CPU: blocks of one gateway's calls, off and on in turn (which goes first alternates).
    const cpu = { off: 0, on: 0 };
    const made = { off: 0, on: 0 };
    for (let b = 0; b * CPU_BLOCK < cpuCalls; b++) {
      const order = b % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
      for (const side of order) {
        const g = side === 'off' ? off : on;
        const c0 = process.threadCpuUsage();
        for (let j = 0; j < CPU_BLOCK; j++) {
          await call(g);
          await turn();
        }
        cpu[side] += cpuMicros(c0);
        made[side] += CPU_BLOCK;
      }
    }
    onCalls += made.on;
    // On's close exports what is still queued: part of its cost.
    const c0 = process.threadCpuUsage();
    await on.tg.close();
    cpu.on += cpuMicros(c0);
    await off.tg.close();
    const received = await sink.stats();

    const offStats = stats(offSamples);
    const onStats = stats(onSamples);
    const p50Ratio = r3(onStats.p50_us / offStats.p50_us);
    const cpuOff = made.off > 0 ? cpu.off / made.off : 0;
    const cpuOn = made.on > 0 ? cpu.on / made.on : 0;
    const created = onCalls * SPANS_PER_CALL;
    return {
      what: 'pipeline without policies, tracing off vs on (every call sampled, OTLP/HTTP protobuf to a collector in its own process), calls alternating, one event-loop turn after each',
      off: offStats,
      on: onStats,
      p50_ratio_on_to_off: p50Ratio,
      p50_extra_us: r1(onStats.p50_us - offStats.p50_us),
      p99_ratio_on_to_off: r3(onStats.p99_us / offStats.p99_us),
      p50_within_5_percent: p50Ratio <= 1.05,
      cpu_us_per_call: { off: r1(cpuOff), on: r1(cpuOn), tracing: r1(cpuOn - cpuOff) },
      spans_created: created,
      spans_exported: received.spans,
      spans_lost: created - received.spans,
      export_requests: received.requests,
      export_bytes: received.bytes,
    };
  } finally {
    sink.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const loadAtStart = loadavg()[0] ?? 0;
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-tracing-'));
  try {
    const t = await tracingOverhead(
      dir,
      Number(process.env.CALLS ?? 3_000),
      Number(process.env.WARMUP ?? 1_000),
      Number(process.env.CPU_CALLS ?? 2_000),
    );
    console.log(
      `tracing: p50 off ${t.off.p50_us} µs, on ${t.on.p50_us} µs, ratio ${t.p50_ratio_on_to_off} (goal ≤ 1.05); p99 ratio ${t.p99_ratio_on_to_off}; CPU per call off ${t.cpu_us_per_call.off} µs, on ${t.cpu_us_per_call.on} µs; spans ${t.spans_exported} of ${t.spans_created} exported in ${t.export_requests} requests`,
    );
    const load = { start: r3(loadAtStart), end: r3(loadavg()[0] ?? 0) };
    console.log(
      JSON.stringify({
        bench: 'gate-tracing',
        node: process.version,
        cpus: cpus().length,
        load_average_1m: load,
        tracing: t,
      }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
