/**
 * Health benchmark (C14): the probe scheduler with TOOLS registered tools (default 10,000), each
 * probed by a harmless call through the real inline runtime on a short configured interval, and
 * the gate beside it. Measured in the same run:
 *
 *  - probes/s sustained while probing runs, against what the interval asks for (tools/interval);
 *  - the gate's p50/p99 for an allowed call (durable audit on SQLite) with probing paused and
 *    running, in alternating rounds (OFF, ON, OFF, ON…), pooled per mode: the ratio ON/OFF (goal:
 *    p99 within 1.1×);
 *  - the hot-path health check itself (`admit`, a Map look-up) with TOOLS tracked;
 *  - the time from a tool going down (its probe starts failing) to it being withdrawn (state
 *    unavailable, left out of a new session), for a restricted tool on a WATCH_MS interval
 *    (goal: one interval + 5 s).
 *
 *   npm run bench:health   (TOOLS=10000 INTERVAL_MS=60000 WATCH_MS=2000 ROUNDS=3 ROUND_S=4
 *                           CONCURRENCY=8 by default)
 *
 * The last line printed is one JSON object.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Actor } from '../src/core/index.js';
import { InlineExecutor } from '../src/execution/runtimes/index.js';
import { openGateway } from '../src/host/toolgate.js';
import { approvePendingReviews } from '../test/support/reviews.js';

const TOOLS = Number(process.env.TOOLS ?? 10_000);
const INTERVAL_MS = Number(process.env.INTERVAL_MS ?? 60_000);
const WATCH_MS = Number(process.env.WATCH_MS ?? 2_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const ROUND_S = Number(process.env.ROUND_S ?? 4);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
const BATCH = 500;

const admin: Actor = { id: 'bench', via: 'library' };
const down = new Set<string>();

const executor = new InlineExecutor()
  .register('bench.noop', async () => ({ ok: true }))
  .register('bench.probe', async (args) => {
    // A cheap upstream: answers on the next turn of the event loop, fails while marked down.
    await new Promise((r) => setImmediate(r));
    if (down.has(String(args.key))) throw new Error('upstream down');
    return { ok: true };
  });

function tool(id: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    version: '1.0.0',
    name: id.replaceAll('.', '_'),
    description: 'Return the status of one internal service by its name.',
    tags: ['status'],
    owner: 'bench-team',
    input_schema: {
      type: 'object',
      additionalProperties: false,
      properties: { key: { type: 'string', maxLength: 64 } },
    },
    output_schema: { type: 'object' },
    action_class: 'read',
    data_access: 'public',
    egress: { mode: 'none' },
    access_tier: 'public',
    required_capabilities: ['status:read'],
    runtime: { kind: 'inline', handler: 'bench.probe' },
    provenance: 'internal',
    ...extra,
  };
}

function percentile(sorted: readonly number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? Number.NaN;
}
const r1 = (x: number) => Math.round(x * 10) / 10;
const r3 = (x: number) => Math.round(x * 1000) / 1000;
function stats(ms: readonly number[]) {
  const s = ms.map((x) => x * 1000).sort((a, b) => a - b);
  return { n: s.length, p50_us: r1(percentile(s, 50)), p99_us: r1(percentile(s, 99)) };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-health-'));
  const tg = await openGateway({
    db: `sqlite:${join(dir, 'toolgate.db')}`,
    executor,
    detectors: false,
    health: {
      intervalMs: { public: INTERVAL_MS, restricted: WATCH_MS, privileged: WATCH_MS },
      maxConcurrentProbes: 32,
      tickMs: 50,
      coverageEveryMs: 1_000,
      breakerOpenMs: 1_000,
    },
  });
  try {
    tg.health.pause();
    // TOOLS probed tools (public: INTERVAL_MS), the watched one (restricted: WATCH_MS), and the
    // gate's target, which has no probe (its health is passive).
    let t0 = performance.now();
    const defs = Array.from({ length: TOOLS }, (_, i) =>
      tool(`bench.status_${i}`, { probe: { kind: 'call', arguments: { key: `k${i}` } } }),
    );
    for (let i = 0; i < defs.length; i += BATCH) {
      await tg.config.apply(
        defs.slice(i, i + BATCH).map((spec) => ({ kind: 'Tool', spec })),
        admin,
      );
    }
    await tg.config.apply(
      [
        {
          kind: 'Tool',
          spec: tool('bench.watched', {
            access_tier: 'restricted',
            required_capabilities: ['watch:read'],
            probe: { kind: 'call', arguments: { key: 'watched' } },
          }),
        },
        {
          kind: 'Tool',
          spec: tool('bench.target', {
            required_capabilities: ['target:read'],
            runtime: { kind: 'inline', handler: 'bench.noop' },
          }),
        },
        { kind: 'Agent', spec: { id: 'caller', owner: 'bench', tier: 'restricted' } },
        { kind: 'Grant', spec: { agent: 'caller', capabilities: ['target:read'] } },
        { kind: 'Agent', spec: { id: 'watcher', owner: 'bench', tier: 'restricted' } },
        { kind: 'Grant', spec: { agent: 'watcher', capabilities: ['watch:read'] } },
      ],
      admin,
    );
    // A restricted tool is a draft until its security review (C1).
    await approvePendingReviews(tg.admin);
    const registerS = (performance.now() - t0) / 1000;
    await tg.health.sync();
    const tracked = tg.health.list().length;

    // The gate, closed loop: CONCURRENCY callers, each in its own session.
    const contexts = await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => ({
        agentId: 'caller',
        sessionId: (await tg.sessions.open('caller')).id,
      })),
    );
    async function gateRound(seconds: number): Promise<number[]> {
      const samples: number[] = [];
      const end = performance.now() + seconds * 1000;
      await Promise.all(
        contexts.map(async (ctx) => {
          while (performance.now() < end) {
            const s = performance.now();
            const d = await tg.gate.invoke(ctx, 'bench.target', {});
            samples.push(performance.now() - s);
            if (d.kind !== 'allow') throw new Error(`gate refused: ${JSON.stringify(d)}`);
          }
        }),
      );
      return samples;
    }
    await gateRound(1); // warm-up (JIT, caches)

    // Alternating rounds: probing paused (OFF) and running (ON).
    const off: number[] = [];
    const on: number[] = [];
    let probesOn = 0;
    let secondsOn = 0;
    // First probes of every tool (the registration's burst, at the concurrency bound), then
    // steady state: what is measured.
    tg.health.resume();
    t0 = performance.now();
    const probed = tg.health.coverage().probed;
    while (tg.health.probesRun < probed) await new Promise((r) => setTimeout(r, 100));
    const firstRoundS = (performance.now() - t0) / 1000;
    for (let round = 0; round < ROUNDS; round++) {
      tg.health.pause();
      off.push(...(await gateRound(ROUND_S)));
      tg.health.resume();
      const p0 = tg.health.probesRun;
      const s0 = performance.now();
      on.push(...(await gateRound(ROUND_S)));
      probesOn += tg.health.probesRun - p0;
      secondsOn += (performance.now() - s0) / 1000;
    }

    // Probing alone, steady: the rate the scheduler sustains with the gate idle.
    const p1 = tg.health.probesRun;
    t0 = performance.now();
    await new Promise((r) => setTimeout(r, ROUND_S * 1000));
    const steadyRate = (tg.health.probesRun - p1) / ((performance.now() - t0) / 1000);

    // The hot-path check with TOOLS tracked.
    const N = 1_000_000;
    let refused = 0;
    t0 = performance.now();
    for (let i = 0; i < N; i++)
      if (tg.health.admit(`bench.status_${i % TOOLS}`, '1.0.0', 'bench')) refused++;
    const admitNs = ((performance.now() - t0) * 1e6) / N;

    // Down → withdrawn, for the watched tool (WATCH_MS interval).
    const healthyBefore = tg.health.healthOf('bench.watched', '1.0.0').state;
    const withdrawn = new Promise<number>((resolve) => {
      const off = tg.health.on((e) => {
        if (e.kind === 'health_changed' && e.toolId === 'bench.watched' && e.to === 'unavailable') {
          off();
          resolve(performance.now());
        }
      });
    });
    const downAt = performance.now();
    down.add('watched');
    const withdrawnAt = await withdrawn;
    const withdrawalMs = withdrawnAt - downAt;
    const s = await tg.sessions.open('watcher');
    const offered = (await tg.sessions.exportTools(s.id, 'watcher', 'mcp')) as { name: string }[];
    const leftOut = !offered.some((t) => t.name === 'bench_watched');
    const back = new Promise<number>((resolve) => {
      const off = tg.health.on((e) => {
        if (e.kind === 'health_changed' && e.toolId === 'bench.watched' && e.to === 'healthy') {
          off();
          resolve(performance.now());
        }
      });
    });
    const upAt = performance.now();
    down.delete('watched');
    const backMs = (await back) - upAt;
    const coverage = tg.health.coverage();

    const offStats = stats(off);
    const onStats = stats(on);
    const asked = TOOLS / (INTERVAL_MS / 1000);
    const result = {
      bench: 'health',
      cpus: cpus().length,
      tools: TOOLS,
      tracked,
      interval_ms: INTERVAL_MS,
      register_seconds: r1(registerS),
      first_probes_seconds: r1(firstRoundS),
      probes_per_s_sustained: r1(probesOn / secondsOn),
      probes_per_s_steady_idle_gate: r1(steadyRate),
      probes_per_s_asked: r1(asked),
      gate_off: offStats,
      gate_on: onStats,
      gate_p50_ratio: r3(onStats.p50_us / offStats.p50_us),
      gate_p99_ratio: r3(onStats.p99_us / offStats.p99_us),
      gate_p99_goal_met: onStats.p99_us / offStats.p99_us <= 1.1,
      admit_ns: r1(admitNs),
      admit_refused: refused,
      watched_interval_ms: WATCH_MS,
      watched_state_before: healthyBefore,
      withdrawal_ms: Math.round(withdrawalMs),
      withdrawal_goal_ms: WATCH_MS + 5_000,
      withdrawal_goal_met: withdrawalMs <= WATCH_MS + 5_000,
      withdrawn_from_new_session: leftOut,
      recovery_ms: Math.round(backMs),
      coverage,
    };
    console.log(
      `tools ${TOOLS}, probes/s ${result.probes_per_s_sustained} (asked ${result.probes_per_s_asked}); gate p99 off ${offStats.p99_us} µs, on ${onStats.p99_us} µs (×${result.gate_p99_ratio}); withdrawn in ${result.withdrawal_ms} ms (goal ${result.withdrawal_goal_ms})`,
    );
    console.log(JSON.stringify(result));
  } finally {
    await tg.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// The monitor's timers do not hold the process open; the benchmark does while it waits on them.
const keepAlive = setInterval(() => {}, 1_000);
await main().finally(() => clearInterval(keepAlive));
